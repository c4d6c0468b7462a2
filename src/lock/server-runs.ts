/**
 * What an MCP server's tool entry in a lock pins besides its declaration: what the server runs and
 * with what rights. Its digest is the entry's `content`, so any change of it withholds the tools
 * (`CODE_CHANGED`), and the difference names the field: `server.args[1]`, `server.grants.write`.
 *
 * ```json
 * "server": { "name": "fs", "command": "/usr/bin/node", "args": ["./server.js", "./data"],
 *             "env": { "LOG_LEVEL": "sha256:…" }, "files": "sha256:…",
 *             "grants": { "allowEnv": [], "net": false, "prefix": null, "read": ["./data"],
 *                         "timeoutMs": null, "write": [] } }
 * ```
 *
 * A server that binds secrets has `grants.secrets` too: each secret's name and the hosts it is bound
 * to, never a value (`"secrets": { "GITHUB_TOKEN": ["api.github.com"] }`); a changed binding is
 * named `server.grants.secrets.GITHUB_TOKEN`. One that binds none has no `secrets` key, so a lock
 * written before servers could bind them still holds.
 */
import type { JsonValue } from '../boundary/tool-contract.js';
import { digestOf } from './canonical.js';
import { declarationDifference, type LockDifference } from './difference.js';
import { checkLockedBindings } from './secret-bindings.js';

/**
 * The most files one server's package folders may hold for the digest of what it runs (a real
 * closure has a few thousand): past that, its tools can't be pinned.
 */
export const MAX_SERVER_FILES = 100_000;

/** A server's grants as its config gave them (paths inside the config's folder as `./…`). */
export interface ServerGrants {
  read: string[];
  write: string[];
  net: boolean | string[];
  allowEnv: string[];
  prefix: string | null;
  timeoutMs: number | null;
  /** Secret name to the hosts it is bound to, as the config wrote them; absent when it binds none. */
  secrets?: Record<string, string[]>;
}

/** What one server runs: pinned with each of its tools. */
export interface ServerRuns {
  /** Its key under `mcpServers`. */
  name: string;
  /** The program, by its real path. */
  command: string;
  /** Its arguments (paths inside the config's folder as `./…`). */
  args: string[];
  /** Each variable the config's `env` sets, by the digest of its value (a lock names no secret). */
  env: Record<string, string>;
  /**
   * `sha256:` of the files the sandbox lets it read to run: its package's own files by content,
   * what is under a `node_modules` folder and the interpreter by file identity (as snapshots do).
   */
  files: string;
  grants: ServerGrants;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const GRANT_KEYS = ['allowEnv', 'net', 'prefix', 'read', 'timeoutMs', 'write'];
const RUNS_KEYS = ['args', 'command', 'env', 'files', 'grants', 'name'];

/** The `content` of a server tool's entry: the digest of what its server runs. */
export function serverRunsDigest(runs: ServerRuns): string {
  return digestOf(runs);
}

/** The problem with a lock entry's `server` object, or undefined when it is one. */
export function serverRunsProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'its "server" is not an object';
  const extra = Object.keys(value).find((key) => !RUNS_KEYS.includes(key));
  if (extra !== undefined) return `its "server" has an unknown key ${JSON.stringify(extra.slice(0, 40))}`;
  const { name, command, args, env, files, grants } = value;
  if (typeof name !== 'string' || name === '') return 'its "server" has no "name"';
  if (typeof command !== 'string' || command === '') return 'its "server" has no "command"';
  if (!isStrings(args)) return 'its "server.args" is not a list of strings';
  if (!isRecord(env) || !Object.values(env).every((item) => typeof item === 'string' && DIGEST.test(item)))
    return 'its "server.env" is not an object of sha256 digests';
  if (typeof files !== 'string' || !DIGEST.test(files)) return 'its "server.files" is not a sha256 digest';
  if (!isRecord(grants)) return 'its "server.grants" is not an object';
  const keys = Object.keys(grants)
    .filter((key) => key !== 'secrets')
    .sort();
  if (keys.join() !== GRANT_KEYS.join())
    return `its "server.grants" must have exactly ${GRANT_KEYS.join(', ')} (and secrets, when it binds any)`;
  const secretsProblem = checkLockedBindings(grants['secrets']);
  if (secretsProblem !== undefined) return `its "server.grants" ${secretsProblem}`;
  const { read, write, net, allowEnv, prefix, timeoutMs } = grants;
  if (!isStrings(read) || !isStrings(write) || !isStrings(allowEnv))
    return 'its "server.grants" read, write and allowEnv must be lists of strings';
  if (typeof net !== 'boolean' && !isStrings(net))
    return 'its "server.grants.net" must be true, false or a list';
  if (prefix !== null && typeof prefix !== 'string')
    return 'its "server.grants.prefix" must be a string or null';
  if (timeoutMs !== null && !(Number.isSafeInteger(timeoutMs) && (timeoutMs as number) > 0))
    return 'its "server.grants.timeoutMs" must be a positive integer or null';
  return undefined;
}

/**
 * What changed between the pinned server and the one read now, each field as `server.<path>`; the
 * grants (`server.grants.…`) apart from what it runs, so a reason can name them as such.
 */
export function serverRunsDifference(
  before: ServerRuns,
  after: ServerRuns,
): { runs: LockDifference[]; grants: LockDifference[] } {
  const all = declarationDifference(before as unknown as JsonValue, after as unknown as JsonValue).map(
    (change) => ({ ...change, field: `server.${change.field}` }),
  );
  return {
    runs: all.filter((change) => !change.field.startsWith('server.grants')),
    grants: all.filter((change) => change.field.startsWith('server.grants')),
  };
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
