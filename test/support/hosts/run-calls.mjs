// A host in a process of its own, for tests that need to see its real stdout and stderr or whether
// it exits by itself. argv[2] is a JSON config: { load: string[], options, calls: [{ tool, args }],
// concurrent? }: the calls run one after another, or all at once (then `answered` lists the tools in
// the order their calls answered, each as soon as it does, on its own line). Its report (one JSON
// line) goes to file descriptor 3, so stdout and stderr carry only what got past toolhost. It never
// calls process.exit: it must end on its own once the host is closed.
import { writeSync } from 'node:fs';
import { ToolHost } from '../../../dist/src/index.js';

const config = JSON.parse(process.argv[2]);
const lines = [];
const logger = {
  info: (message) => lines.push(`info ${message}`),
  warn: (message) => lines.push(`warn ${message}`),
  error: (message) => lines.push(`error ${message}`),
};
const host = new ToolHost({ isolation: 'worker', ...config.options, logger });
const outputs = [];
host.on('output', (event) => outputs.push(event.logs.map((log) => log.text).join('')));
const report = { loaded: [], outcomes: [], outputs, lines, closed: false };
for (const path of config.load) {
  const loaded = await host.load(path);
  report.loaded.push(...loaded.modules.map((module) => module.state));
}
if (config.concurrent === true) {
  const answered = (tool) => writeSync(3, `${JSON.stringify({ answered: tool })}\n`);
  report.outcomes = await Promise.all(
    config.calls.map(({ tool, args }) =>
      host.call(tool, args).then((outcome) => {
        answered(tool);
        return outcome;
      }),
    ),
  );
} else {
  for (const { tool, args } of config.calls) report.outcomes.push(await host.call(tool, args));
}
await host.close();
report.closed = true;
writeSync(3, `${JSON.stringify(report)}\n`);
