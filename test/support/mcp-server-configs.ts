/**
 * MCP client configs for tests (`{ "mcpServers": … }` files in a test's folder), the real servers
 * installed as devDependencies, and a way to find a server's processes from outside: each config
 * entry gets a marker in its environment, and /proc tells which processes carry it.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './cli-run.js';

const SERVERS = join(REPO, 'node_modules/@modelcontextprotocol');
export const EVERYTHING = join(SERVERS, 'server-everything/dist/index.js');
export const FILESYSTEM = join(SERVERS, 'server-filesystem/dist/index.js');
export const MEMORY = join(SERVERS, 'server-memory/dist/index.js');
export const LINE_SERVER = join(REPO, 'fixtures/mcp-servers/line-server.mjs');

/** The name of the environment variable that marks a test's servers. */
export const MARKER = 'TOOLHOST_TEST_MARKER';

/** Writes `servers.json` (or `file`) into `folder`; every entry gets `marker` in its env. */
export function writeConfig(
  folder: string,
  servers: Record<string, Record<string, unknown>>,
  options: { marker?: string; file?: string } = {},
): { path: string; marker: string } {
  const marker = options.marker ?? randomBytes(8).toString('hex');
  const marked = Object.fromEntries(
    Object.entries(servers).map(([name, entry]) => {
      const env = { ...(entry['env'] as Record<string, string> | undefined), [MARKER]: marker };
      return [name, entry['url'] === undefined ? { ...entry, env } : entry];
    }),
  );
  const path = join(folder, options.file ?? 'servers.json');
  writeFileSync(path, JSON.stringify({ mcpServers: marked }, null, 2));
  return { path, marker };
}

/** The pids of the processes whose environment carries `marker` (a test's servers). */
export function markedProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(join('/proc', name, 'environ'), 'latin1').includes(`${MARKER}=${marker}`))
        found.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}
