/**
 * `--isolation process` and `--process-memory-mb` on the command line: a call runs in a process of
 * its package's own, the memory limit is the flag's, a bad value is a usage error, and where the tier
 * lacks something here (no bubblewrap on PATH) the command says it in one line on stderr.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { freshDir, PACKAGES, runCli, stderrLines } from './support/cli-run.js';
import { startStdio } from './support/mcp-serve.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const environment = await processEnvironment();

let tmp: { path: string; remove(): void };
beforeEach(() => {
  tmp = freshDir('toolhost-cli-process');
});
afterEach(() => tmp.remove());

describe('toolhost call --isolation process', () => {
  it('runs the call in a process of its own and prints the answer, saying nothing else where the tier has all it can', async ({
    skip,
  }) => {
    skip(
      !environment.sandbox.available || !environment.cgroups.available,
      'this machine lacks a sandbox or cgroups',
    );
    const args = ['call', '--isolation', 'process', join(PACKAGES, 'unit-converter'), 'convert_length'];
    const result = await runCli([...args, '{"value": 5, "from": "km", "to": "mi"}'], { tmpDir: tmp.path });
    expect(result).toMatchObject({ code: 0, stdout: '5 km = 3.10685596119 mi\n', stderr: '' });
  });

  it('without bubblewrap the call still runs, and the command says once what the tier lacks', async () => {
    const args = ['call', '--isolation', 'process', join(PACKAGES, 'unit-converter'), 'convert_length'];
    const result = await runCli([...args, '{"value": 5, "from": "km", "to": "mi"}'], {
      tmpDir: tmp.path,
      env: { PATH: '' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('5 km = 3.10685596119 mi\n');
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^toolhost: note: process isolation here runs without an OS sandbox \(bubblewrap \(bwrap\) is not installed\), so its processes are confined by Node's permission model with strict's grants instead(, which here does not contain .*)?(, and without .*)?; see the table of what each tier contains in docs\/isolation\.md$/,
    );
  });

  it('--process-memory-mb is the limit of the package’s process', async () => {
    const args = [
      'call',
      '--isolation',
      'process',
      '--process-memory-mb',
      '256',
      HOSTILE,
      'proc_memory_bomb',
    ];
    const result = await runCli([...args, '{"megabytes": 8192, "kind": "buffer"}'], { tmpDir: tmp.path });
    const reason = environment.cgroups.available
      ? "the tool's process ran out of memory (limit 256 MB)"
      : "the tool's process went over its memory limit (256 MB of resident memory)";
    expect(result.code).toBe(1);
    expect(stderrLines(result).at(-1)).toBe(
      `toolhost: the tool "proc_memory_bomb" failed: TOOL_OUT_OF_MEMORY: ${reason}`,
    );
  });

  it('a --process-memory-mb that is not a positive integer is a usage error', async () => {
    const result = await runCli(['list', '--process-memory-mb', '0', HOSTILE], { tmpDir: tmp.path });
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      'toolhost: expected --process-memory-mb to be a positive integer, got "0"',
    ]);
  });
});

describe('toolhost serve --isolation process', () => {
  it('--process-memory-mb is the limit of each served package’s process; the next call gets a new one', async () => {
    const serve = await startStdio(
      ['--isolation', 'process', '--process-memory-mb', '256', HOSTILE],
      tmp.path,
    );
    try {
      const bomb = await serve.client.callTool(
        { name: 'proc_memory_bomb', arguments: { megabytes: 8192, kind: 'buffer' } },
        CallToolResultSchema,
      );
      const reason = environment.cgroups.available
        ? "the tool's process ran out of memory (limit 256 MB)"
        : "the tool's process went over its memory limit (256 MB of resident memory)";
      expect(bomb.isError).toBe(true);
      expect(bomb.content).toStrictEqual([{ type: 'text', text: `TOOL_OUT_OF_MEMORY: ${reason}` }]);

      const next = await serve.client.callTool(
        { name: 'proc_nap', arguments: { ms: 1 } },
        CallToolResultSchema,
      );
      expect(next.content).toStrictEqual([{ type: 'text', text: 'napped 1 ms' }]);
      expect(serve.clientErrors).toEqual([]);
    } finally {
      await serve.client.close();
    }
  });
});
