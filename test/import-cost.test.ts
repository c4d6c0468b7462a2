/**
 * What importing toolhost loads. The core is the host, its registry and its pools: the Anthropic SDK
 * (the loop's), the MCP SDK (serve's), Ajv's code generation (schemas) and piscina (pools) are
 * loaded by the first thing that uses them, so a process that never runs the loop or serves MCP
 * doesn't pay for them, and `toolhost --version` loads no dependency at all.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI, PACKAGES } from './support/cli-run.js';

const RECORDER = fileURLToPath(new URL('./support/record-imports.mjs', import.meta.url));
const INDEX = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));

/** The packages a fresh Node process loaded while running `args`. */
async function packagesLoaded(args: string[]): Promise<string[]> {
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', RECORDER, ...args], {
    env: { PATH: process.env['PATH'] ?? '' },
  });
  const line = /^imported-packages (.*)$/m.exec(stderr);
  if (line?.[1] === undefined) throw new Error(`no imported-packages line in: ${stderr}`);
  return JSON.parse(line[1]) as string[];
}

const module = (code: string) => ['--input-type=module', '-e', code];

describe('what loading toolhost loads', () => {
  it('importing toolhost loads none of the Anthropic SDK, the MCP SDK, Ajv or piscina', async () => {
    const packages = await packagesLoaded(module(`await import(${JSON.stringify(INDEX)});`));
    expect(packages).toEqual(['is-network-error', 'p-retry']);
  });

  it("importing toolhost doesn't load Node's socket stack (node:net): only a network rule that names an address needs it", async () => {
    // Read before anything prints: a piped stdout is a socket, which loads node:net itself.
    const { stdout } = await promisify(execFile)(process.execPath, [
      ...module(
        `await import(${JSON.stringify(INDEX)}); const loaded = process.moduleLoadList.includes('NativeModule net'); console.log(loaded);`,
      ),
    ]);
    expect(stdout.trim()).toBe('false');
  });

  it('toolhost --version loads no dependency', async () => {
    expect(await packagesLoaded([CLI, '--version'])).toEqual([]);
  });

  it("a host that calls only its own tools loads no SDK and no pool; reading a package's schemas loads Ajv", async () => {
    const own = await packagesLoaded(
      module(`
        const { ToolHost } = await import(${JSON.stringify(INDEX)});
        const host = new ToolHost();
        host.register({ name: 'own', description: 'd', parameterSchema: { type: 'object' }, run: () => 'ok' });
        const outcome = await host.call('own', {});
        if (outcome.isError) throw new Error('the call failed');
        await host.close();
      `),
    );
    expect(own).not.toContain('piscina');
    expect(own).not.toContain('@anthropic-ai/sdk');
    expect(own).not.toContain('@modelcontextprotocol/sdk');

    const listed = await packagesLoaded([CLI, 'list', `${PACKAGES}/text-stats`]);
    expect(listed).toContain('ajv');
    expect(listed).not.toContain('@anthropic-ai/sdk');
    expect(listed).not.toContain('@modelcontextprotocol/sdk');
  });
});
