/**
 * A host in a process of its own, for tests that watch what reaches a host's stdout and whether the
 * host's process ends by itself. Argument: JSON `{ options, packages, calls: [{ name, args, options }] }`;
 * the string "$HOST_PID" anywhere in a call's args is this process's pid. Writes one line
 * `RESULT <outcome JSON>` per call and `CLOSED` after close() (and `STATUS <status JSON>` after the
 * loads, when `statusAfterLoad` is set), and nothing else; never calls exit.
 */
import { ToolHost } from '../../dist/src/index.js';

const plan = JSON.parse(process.argv[2] ?? '{}');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const host = new ToolHost({ isolation: 'worker', ...plan.options, logger: quiet });
for (const path of plan.packages ?? []) await host.load(path);
if (plan.statusAfterLoad === true) process.stdout.write(`STATUS ${JSON.stringify(host.status())}\n`);
for (const call of plan.calls ?? []) {
  const args = JSON.parse(JSON.stringify(call.args).replaceAll('"$HOST_PID"', String(process.pid)));
  const outcome = await host.call(call.name, args, call.options ?? {});
  process.stdout.write(`RESULT ${JSON.stringify(outcome)}\n`);
}
await host.close();
process.stdout.write('CLOSED\n');
