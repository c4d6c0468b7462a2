/**
 * A worker's start prints nothing of toolhost's own: its hardening reaches some of Node's internal
 * bindings, and the first reach to one of them makes Node warn on the worker's stderr, which the host
 * would hear as the tool's printing. A quiet tool's read and call leave no printed line, in every
 * tier, and the host's `output` event stays silent; so does a Node that warns of every deprecation.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { collect, expectHostFine, fixtureModule, loadEcho, useHosts } from './support/host-harness.js';

const makeHost = useHosts();

describe.each(['worker', 'strict', 'process'] as const)('a worker start in the %s tier', (isolation) => {
  it("prints nothing: a quiet tool's read and its calls leave no printed line", async () => {
    const { host, logger } = await makeHost({ isolation });
    const outputs = collect(host, 'output');
    await loadEcho(host);

    await expectHostFine(host);
    await expectHostFine(host, 'twice');
    expect(logger.lines.filter((line) => line.message.includes('printed'))).toStrictEqual([]);
    expect(outputs).toStrictEqual([]);
  });
});

describe('a host whose Node warns of every deprecation, and throws for one', () => {
  it.each(['worker', 'strict', 'process'] as const)(
    "in the %s tier, calls answer as usual and nothing of toolhost's own is printed",
    async (isolation) => {
      const directory = await mkdtemp(join(tmpdir(), 'toolhost-deprecation-'));
      try {
        const script = join(directory, 'host.mjs');
        const index = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src', 'index.js')).href;
        await writeFile(
          script,
          `import { ToolHost } from ${JSON.stringify(index)};
const printed = [];
// The host logs a tool's printing as "tool <name> printed: ..."; the tier's notice is not printing.
const heard = (message) => { if (message.includes('printed')) printed.push(message); };
const host = new ToolHost({ isolation: ${JSON.stringify(isolation)}, dataDir: ${JSON.stringify(directory)}, logger: { info: heard, warn: heard, error: heard } });
host.on('output', (event) => printed.push(event.text));
await host.load(${JSON.stringify(fixtureModule('echo.js'))});
await host.load(${JSON.stringify(fixtureModule('call-unhandled-rejection.js'))});
const outcomes = [];
for (const [name, args] of [['echo', { text: 'one' }], ['call_unhandled_rejection', {}], ['echo', { text: 'two' }]]) {
  const outcome = await host.call(name, args);
  outcomes.push(outcome.error?.code ?? JSON.parse(outcome.content[0].text).echoed);
}
await host.close();
console.log(JSON.stringify({ outcomes, printed }));
`,
        );
        // NODE_OPTIONS reaches the host and every worker and package process it starts.
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [script], {
          timeout: 45_000,
          env: { ...process.env, NODE_OPTIONS: '--pending-deprecation --throw-deprecation' },
        });

        expect(JSON.parse(stdout)).toStrictEqual({
          outcomes: ['one', 'TOOL_UNHANDLED_REJECTION', 'two'],
          printed: [],
        });
        expect(stderr).not.toContain('DeprecationWarning');
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  );
});
