// A host built with no `isolation`, in a process of its own (so that its PATH decides whether it
// finds bubblewrap, once per process). argv[2] is the package to load. It calls `where_it_runs` once
// and writes one JSON line to stdout: the host's pid, the statuses, the outcome and what it logged.
import { ToolHost } from '../../../dist/src/index.js';

const lines = [];
const logger = {
  info: (message) => lines.push(`info ${message}`),
  warn: (message) => lines.push(`warn ${message}`),
  error: (message) => lines.push(`error ${message}`),
};
const host = new ToolHost({ logger, dataDir: process.argv[3] });
await host.load(process.argv[2]);
const outcome = await host.call('where_it_runs', {});
const report = { hostPid: process.pid, statuses: host.status(), outcome, lines };
await host.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
