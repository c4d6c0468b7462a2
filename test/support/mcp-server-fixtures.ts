/**
 * The stdio MCP servers of fixtures/mcp-servers (one attack each, no SDK): their paths, the markers
 * they write, and a config file that lists some of them as `mcpServers` entries in a temp folder.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** fixtures/mcp-servers. */
export const MCP_SERVERS = fileURLToPath(new URL('../../fixtures/mcp-servers', import.meta.url));

/** The path of one fixture server, by its file name without `.mjs`. */
export function mcpServerFile(name: string): string {
  return join(MCP_SERVERS, `${name}.mjs`);
}

/** What every line of stdout-garbage.mjs's garbage holds. */
export const GARBAGE_MARKER = 'STDOUT-GARBAGE-7f3a';
/** What stderr-flood.mjs floods stderr with. */
export const FLOOD_MARKER = 'STDERR-FLOOD-5c1e';

/** One `mcpServers` entry: the standard fields and toolhost's grants. */
export interface ServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
  toolhost?: {
    read?: string[];
    write?: string[];
    net?: boolean | string[];
    secrets?: Record<string, string[]>;
    allowEnv?: string[];
    timeoutMs?: number;
    prefix?: string;
  };
}

/** An entry that runs a fixture server with the Node running the tests. */
export function fixtureEntry(name: string, extra: Omit<ServerEntry, 'command' | 'args'> = {}): ServerEntry {
  return { command: process.execPath, args: [mcpServerFile(name)], ...extra };
}

/** Writes `{ "mcpServers": servers }` as `<folder>/<fileName>` and returns its path. */
export async function writeServersConfig(
  folder: string,
  servers: Record<string, ServerEntry>,
  fileName = 'servers.json',
): Promise<string> {
  const path = join(folder, fileName);
  await writeFile(path, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
  return path;
}
