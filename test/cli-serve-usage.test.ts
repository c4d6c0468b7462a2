/**
 * `toolhost serve`'s mistakes: each is exit code 2 and one line on stderr in the command's voice,
 * nothing on stdout (over stdio that is the protocol's), no process and no temp folder left. A path
 * that doesn't exist is found by the hosting process, which says so the same way.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, freshDir, runCli, stderrLines } from './support/cli-run.js';
import { GOOD } from './support/mcp-serve.js';

let tmp: ReturnType<typeof freshDir>;
beforeEach(() => {
  tmp = freshDir('cli-serve-usage');
});
afterEach(() => tmp.remove());

const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(['serve', ...args], { tmpDir: tmp.path, env });

function expectUsageError(result: CliResult, line: string): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(stderrLines(result)).toEqual([`toolhost: ${line}`]);
  expect(readdirSync(tmp.path)).toEqual([]);
}

describe('toolhost serve usage errors', () => {
  it('needs something to serve', async () => {
    expectUsageError(
      await run([]),
      'serve expects a package or module path, or --watch DIR (see toolhost serve --help)',
    );
  });

  it.each(['80x', 'localhost:', ':80', 'localhost:65536', '[::1]80'])('refuses --http %s', async (value) => {
    expectUsageError(
      await run(['--http', value, GOOD]),
      `expected --http to be [host:]port with a port from 0 to 65535, got ${JSON.stringify(value)}`,
    );
  });

  it.each(['--token-env', '--allow-origin'])('refuses %s without --http', async (option) => {
    expectUsageError(
      await run([option, 'X', GOOD]),
      `expected --http beside ${option}, which applies to HTTP only`,
    );
  });

  it('refuses --token-env naming a variable that is not set or empty', async () => {
    const line =
      'expected the environment variable MCP_TOKEN (named by --token-env) to hold the token, but it is empty or not set';
    expectUsageError(await run(['--http', '0', '--token-env', 'MCP_TOKEN', GOOD]), line);
    expectUsageError(await run(['--http', '0', '--token-env', 'MCP_TOKEN', GOOD], { MCP_TOKEN: '' }), line);
  });

  it('refuses an --allow-origin that is not an origin', async () => {
    expectUsageError(
      await run(['--http', '0', '--allow-origin', 'https://app.example/path', GOOD]),
      'expected --allow-origin to be an origin such as https://app.example, got "https://app.example/path"',
    );
  });

  it('refuses a --json it does not take (its stdout is the protocol)', async () => {
    expectUsageError(await run(['--json', GOOD]), 'unknown option --json (see toolhost serve --help)');
  });

  it.each([
    ['over stdio', []],
    ['over HTTP', ['--http', '127.0.0.1:0']],
  ])('names a path that does not exist, %s', async (_how, transport) => {
    const missing = join(tmp.path, 'nowhere');
    const result = await run([...transport, 'nowhere'].map((arg) => (arg === 'nowhere' ? missing : arg)));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toHaveLength(1);
    expect(stderrLines(result)[0]).toMatch(/^toolhost: [a-z].*nowhere/);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('names a path that does not exist when stdin is already at its end (exit 2, not a silent 0)', async () => {
    const missing = join(tmp.path, 'nowhere');
    const result = await runCli(['serve', missing], { tmpDir: tmp.path, input: '' });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toEqual([`toolhost: no such file or directory: ${missing}`]);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('answers a request once when the client closes stdin at once, whether or not the server had started', async () => {
    const ping = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`;
    const result = await runCli(['serve', GOOD], { tmpDir: tmp.path, input: ping });
    const answers = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { id?: unknown; result?: unknown; error?: { code: number } });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.id).toBe(1);
    expect(answers[0]?.result !== undefined || answers[0]?.error?.code === -32603).toBe(true);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('names a --watch folder that does not exist', async () => {
    const result = await run(['--watch', join(tmp.path, 'nowhere')]);
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toHaveLength(1);
    expect(stderrLines(result)[0]).toMatch(/^toolhost: [a-z].*nowhere/);
  });
});
