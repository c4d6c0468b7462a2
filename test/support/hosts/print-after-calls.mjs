// A host in a process of its own that prints on its own stdout after every call: a tool that took
// over the process's descriptor 1 would get these lines instead of the process's stdout. argv[2] is a
// JSON config: { load: string[], options, calls: [{ tool, args }] }. After call i it writes
// `host i console` (console.log) and `host i fd` (fs.writeSync(1)); its report (one JSON line) goes
// to file descriptor 3. It never calls process.exit: it must end on its own once the host is closed.
import { writeSync } from 'node:fs';
import { ToolHost } from '../../../dist/src/index.js';

const config = JSON.parse(process.argv[2]);
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const host = new ToolHost({ isolation: 'worker', ...config.options, logger: quiet });
const report = { loaded: [], outcomes: [], closed: false };
for (const path of config.load) {
  const loaded = await host.load(path);
  report.loaded.push(...loaded.modules.map((module) => module.state));
}
for (const [index, { tool, args }] of config.calls.entries()) {
  report.outcomes.push(await host.call(tool, args));
  console.log(`host ${index} console`);
  writeSync(1, `host ${index} fd\n`);
}
await host.close();
report.closed = true;
writeSync(3, `${JSON.stringify(report)}\n`);
