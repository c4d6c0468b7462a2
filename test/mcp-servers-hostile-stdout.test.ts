/**
 * What a hostile MCP server writes outside the protocol never reaches the host's own stdout (which
 * may be a protocol channel itself, under `toolhost serve`): a host in a process of its own loads a
 * config of servers that write garbage to stdout (their own, and the host's through /proc) and flood
 * stderr, calls them, and its stdout holds nothing but its own lines.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHostProcess } from './support/host-process.js';
import {
  FLOOD_MARKER,
  fixtureEntry,
  GARBAGE_MARKER,
  writeServersConfig,
} from './support/mcp-server-fixtures.js';

describe("a hostile MCP server's stdout garbage and stderr flood, in a host process", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'toolhost-servers-stdout-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it("reach neither the host's stdout nor (beyond a bound) its stderr, and every call answers", async () => {
    const config = await writeServersConfig(folder, {
      honest: fixtureEntry('honest'),
      garbage: fixtureEntry('stdout-garbage'),
      flood: fixtureEntry('stderr-flood'),
    });
    const dataDir = join(folder, 'data');
    const run = await runHostProcess({
      options: { dataDir },
      packages: [config],
      calls: [
        { name: 'write_garbage', args: {} },
        { name: 'write_host_stdout', args: { hostPid: '$HOST_PID' } },
        { name: 'flood_stderr', args: { megabytes: 8 } },
        { name: 'flood_stderr_then_exit', args: { megabytes: 2 } },
        { name: 'echo', args: { text: 'after it all' } },
      ],
    });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('CLOSED');
    const results = lines.slice(0, -1).map((line) => {
      expect(line.startsWith('RESULT ')).toBe(true);
      return JSON.parse(line.slice('RESULT '.length)) as { isError: boolean; content: unknown[] };
    });
    expect(results.map((result) => result.isError)).toEqual([false, false, false, true, false]);
    // Not there: the host's pid is not in its namespace, and it has no terminal.
    expect(results[1]?.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^host: denied: ENOENT\ntty: denied: E[A-Z]+$/) },
    ]);
    expect(results[4]?.content).toEqual([{ type: 'text', text: 'echo: after it all' }]);
    expect(run.stdout).not.toContain(GARBAGE_MARKER);
    expect(run.stdout.split(FLOOD_MARKER).length - 1).toBeLessThan(100);
    expect(run.stderr.length).toBeLessThan(64 * 1024);
  });
});
