// A host in a process of its own (so that its PATH decides whether it finds bubblewrap, once per
// process). argv[2] is JSON `{ options, load, tool, args }`: it loads `load`, calls `tool` once and
// writes one JSON line to stdout: the statuses and the outcome.
import { ToolHost } from '../../../dist/src/index.js';

const plan = JSON.parse(process.argv[2]);
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const host = new ToolHost({ ...plan.options, logger: quiet });
await host.load(plan.load);
const outcome = await host.call(plan.tool, plan.args);
const report = { statuses: host.status(), outcome };
await host.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
