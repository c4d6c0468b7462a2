/**
 * Errors that point at the line, for a tool's author: a thrown error's stack (the tool's own frames,
 * relative to its package, for the host only), and left-out reasons that start with `file:line:column`
 * (a syntax error, a throw at load, a field that throws, a field that is wrong).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hostPackage, useHosts } from './support/host-harness.js';

const PACKAGE = hostPackage('located');

describe('where a tool failed', () => {
  const makeHost = useHosts();

  it("a thrown error's stack names the tool's file and lines, relative to its package, and the model doesn't see it", async () => {
    const { host } = await makeHost();
    await host.load(PACKAGE);

    const outcome = await host.call('located_typo', {});

    expect(outcome.error).toStrictEqual({
      code: 'TOOL_THREW',
      message: "Cannot read properties of undefined (reading 'value')",
      // How V8 names the caller (`Module.run`) is its own business; the file and lines are the point.
      stack: expect.stringMatching(
        /^ {4}at deep \(tools\/typo\.js:7:23\)\n {4}at \S*run \(tools\/typo\.js:11:10\)$/,
      ),
    });
    // No toolhost or Node frames, no absolute paths, nothing of it in what the model reads.
    expect(outcome.content).toStrictEqual([{ type: 'text', text: outcome.error?.message }]);
  });

  it('with errorStacksToModel the model gets the stack under the message', async () => {
    const { host } = await makeHost({ errorStacksToModel: true });
    await host.load(PACKAGE);

    const outcome = await host.call('located_typo', {});

    expect(outcome.content).toStrictEqual([
      { type: 'text', text: `${outcome.error?.message}\n${outcome.error?.stack}` },
    ]);
  });

  it("a failing selftest's report carries where it failed", async () => {
    const { host } = await makeHost();
    await host.load(PACKAGE);

    const [report] = await host.selftest(['located_typo']);

    expect(report?.error?.stack).toMatch(
      /^ {4}at deep \(tools\/typo\.js:7:23\)\n {4}at \S*selftest \(tools\/typo\.js:15:3\)$/,
    );
  });

  it('an option that is not a boolean is refused when the host is built', async () => {
    await expect(makeHost({ errorStacksToModel: 'yes' as never })).rejects.toThrow(
      'Expected `errorStacksToModel` to be a boolean, got "yes"',
    );
  });
});

describe('where a module could not be read', () => {
  const makeHost = useHosts();

  it('each reason starts with file:line:column, relative to the package', async () => {
    const { host } = await makeHost();

    const report = await host.load(PACKAGE);

    const reasons = Object.fromEntries(
      report.modules
        .filter((module) => module.state === 'left-out')
        .map((module) => [module.path.split('/').pop(), `${module.code}: ${module.reason}`]),
    );
    expect(reasons).toStrictEqual({
      // Node's import() gives no location for a syntax error: Node's own parser finds it.
      'broken-syntax.js': "IMPORT_FAILED: tools/broken-syntax.js:5:18: Unexpected token ';'",
      'throws-at-load.js': 'IMPORT_FAILED: tools/throws-at-load.js:3:7: no configuration found',
      'name-throws.js': 'DECLARATION_THREW: tools/name-throws.js:4:9: name threw: no name yet',
    });
  });
});

describe('the toolhost command shows where', () => {
  it("selftest prints a failure's frames under its line, and each left-out reason with its location", async () => {
    const { stdout, code } = await runCli(['selftest', PACKAGE]);

    expect(code).toBe(1);
    expect(stdout).toMatch(
      /^FAILED {6}located_typo \(located\) .*: TOOL_THREW: Cannot read properties of undefined \(reading 'value'\)\n {4}at deep \(tools\/typo\.js:7:23\)\n {4}at \S*selftest \(tools\/typo\.js:15:3\)$/m,
    );
    expect(stdout).toContain(
      "left out    tools/broken-syntax.js (located): IMPORT_FAILED: tools/broken-syntax.js:5:18: Unexpected token ';'",
    );
  });
});

/** The built CLI as a child process, in CI mode (plain lines), with its exit code and stdout. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url)), ...args],
      { env: { PATH: process.env['PATH'] ?? '', CI: '1' } },
      (error, stdout) => {
        if (error !== null && typeof error.code !== 'number') reject(error);
        else resolve({ code: error === null ? 0 : (error.code as number), stdout });
      },
    );
  });
}
