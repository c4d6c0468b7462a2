/**
 * An MCP client config (`{ "mcpServers": { … } }`, as Claude Desktop, Claude Code's `.mcp.json` and
 * Cursor write it) read as a source: each stdio server entry becomes a {@link ServerEntry}, or a
 * reason it can't be run. One bad entry never stops the others; only a file that can't be read or
 * is not JSON at all throws.
 */

import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { ToolHostError } from '../../boundary/errors.js';
import { MAX_TIMEOUT_MS } from '../../declaration/check.js';
import { firstHidden } from '../../declaration/visible-text.js';
import type { NetworkAsk } from '../../process/network/grant.js';
import { parseNetRules } from '../../process/network/rules.js';
import { parseSecretBindings, type SecretBinding } from '../../process/network/secrets/bindings.js';
import { secretsUnsupported } from '../../process/network/secrets/node-http-parser.js';
import { packageRunOf } from './npx-entry.js';

/** One stdio server of a config, its paths resolved against the config's folder. */
export interface ServerEntry {
  /** Its key under `mcpServers`. */
  name: string;
  command: string;
  args: string[];
  /** Passed to the server as written. */
  env: Record<string, string>;
  /** Folders and files it may read (besides what its command needs to run). */
  read: string[];
  /** Folders and files it may write (and read). */
  write: string[];
  /** The hosts it may reach through its egress proxy (`true`: any, `false`: none). */
  net: NetworkAsk;
  /**
   * Its secret bindings (`"secrets": { "NAME": ["host"] }`), each host one `net` asks for: the
   * server's environment holds a placeholder, its proxy swaps the host's granted value in.
   */
  secrets: readonly SecretBinding[];
  /** Names of the host's environment variables it gets. */
  allowEnv: string[];
  /** Its calls' timeout; the host's default when absent. */
  timeoutMs: number | undefined;
  /** Its tools are offered as `<prefix>_<name>`. */
  prefix: string | undefined;
  /** The config file's folder (a server's relative paths were resolved against it). */
  folder: string;
  /** The config file (its servers' source: what their `network` events name). */
  config: string;
}

/**
 * One entry of a config: a server to run, or why it is not run (`SERVER_UNSUPPORTED`: remote or
 * disabled; `DECLARATION_INVALID`: an entry that can't be read).
 */
export type ConfiguredServer =
  | { ok: true; entry: ServerEntry }
  | { ok: false; name: string; code: 'SERVER_UNSUPPORTED' | 'DECLARATION_INVALID'; reason: string };

/** The largest config file read (real ones are a few KB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** The most servers one config may list. */
export const MAX_SERVERS = 64;
/** A prefix as it can stand in front of a tool's name. */
const PREFIX_PATTERN = /^[a-zA-Z0-9_-]{1,32}$/;
/** An environment variable's name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** The keys the `toolhost` object of an entry takes. */
const TOOLHOST_KEYS = ['read', 'write', 'net', 'secrets', 'allowEnv', 'timeoutMs', 'prefix'] as const;

/**
 * The config's parsed JSON when `path` is an MCP client config (a file whose top level is an object
 * with `mcpServers`), else undefined. Only `.json` files are looked into.
 */
export async function readServersConfigJson(path: string): Promise<Record<string, unknown> | undefined> {
  // A package's manifest stands for its package, never for a config.
  if (!path.endsWith('.json') || basename(path) === 'package.json') return undefined;
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || !info.isFile()) return undefined;
  if (info.size > MAX_CONFIG_BYTES) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `${path} is ${info.size} bytes, more than the ${MAX_CONFIG_BYTES} an MCP client config may have`,
    );
  }
  const text = await readFile(path, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: not a config (a package.json or module is judged by the caller).
    return undefined;
  }
  if (!isRecord(parsed) || !Object.hasOwn(parsed, 'mcpServers')) return undefined;
  return parsed;
}

/** Every entry of a config's `mcpServers`, each a server to run or why not. */
export async function parseServersConfig(
  json: Record<string, unknown>,
  configPath: string,
): Promise<ConfiguredServer[]> {
  const servers = json['mcpServers'];
  if (!isRecord(servers)) {
    throw new ToolHostError('NOT_A_PACKAGE', `${configPath}: "mcpServers" is not an object of servers`);
  }
  const names = Object.keys(servers);
  if (names.length > MAX_SERVERS) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `${configPath} lists ${names.length} servers, more than the ${MAX_SERVERS} one config may list`,
    );
  }
  const config = resolve(configPath);
  const folder = dirname(config);
  return Promise.all(names.map((name) => parseEntry(name, servers[name], { folder, config })));
}

async function parseEntry(
  name: string,
  value: unknown,
  { folder, config }: { folder: string; config: string },
): Promise<ConfiguredServer> {
  const refuse = (
    reason: string,
    code: 'SERVER_UNSUPPORTED' | 'DECLARATION_INVALID' = 'DECLARATION_INVALID',
  ) => ({ ok: false, name, code, reason }) satisfies ConfiguredServer;
  const hiddenName = firstHidden(name);
  if (name === '' || name.length > 128 || hiddenName !== undefined) {
    return refuse('its name must be 1 to 128 visible characters');
  }
  if (!isRecord(value)) return refuse(`${name} is not an object with a "command"`);
  if (value['disabled'] === true)
    return refuse(`${name} is disabled in the config ("disabled": true)`, 'SERVER_UNSUPPORTED');
  if (value['url'] !== undefined || value['type'] === 'http' || value['type'] === 'sse') {
    return refuse(
      `${name} is a remote server (url): toolhost hosts stdio servers only`,
      'SERVER_UNSUPPORTED',
    );
  }
  const { command } = value;
  if (typeof command !== 'string' || command.trim() === '') {
    return refuse(`${name} has no "command" (a string naming the program to start)`);
  }
  const args = stringList(value['args']);
  if (args === undefined) return refuse(`${name}: "args" must be a list of strings`);
  // `npx -y <pkg>` and the like fetch at start: the installed copy runs instead, or the entry is left out.
  const packageRun = await packageRunOf(command, args, folder);
  if (packageRun?.ok === false) return refuse(`${name}: ${packageRun.reason}`, packageRun.code);
  const env = stringRecord(value['env']);
  if (env === undefined) return refuse(`${name}: "env" must be an object of string values`);
  const grants = await parseToolhost(name, value['toolhost'], folder);
  if (typeof grants === 'string') return refuse(grants);
  // A bound secret's variable holds its placeholder: the config can't hand the server a value for it.
  for (const { name: secret } of grants.secrets) {
    if (Object.hasOwn(env, secret) || grants.allowEnv.includes(secret)) {
      return refuse(
        `${name}: secret ${secret} is bound in "toolhost.secrets" and also set by ${Object.hasOwn(env, secret) ? '"env"' : '"toolhost.allowEnv"'}, which would hand the server its value: remove it from there`,
      );
    }
  }
  return {
    ok: true,
    entry: {
      name,
      command: packageRun?.command ?? resolveRelative(command, folder),
      args: (packageRun?.args ?? args).map((arg) => resolveRelative(arg, folder)),
      env,
      ...grants,
      folder,
      config,
    },
  };
}

type Grants = Pick<ServerEntry, 'read' | 'write' | 'net' | 'secrets' | 'allowEnv' | 'timeoutMs' | 'prefix'>;

/** The entry's `toolhost` object, or why it can't be used. */
async function parseToolhost(name: string, value: unknown, folder: string): Promise<Grants | string> {
  const grants: Grants = {
    read: [],
    write: [],
    net: false,
    secrets: [],
    allowEnv: [],
    timeoutMs: undefined,
    prefix: undefined,
  };
  if (value === undefined) return grants;
  if (!isRecord(value)) return `${name}: "toolhost" must be an object`;
  for (const key of Object.keys(value)) {
    if (!(TOOLHOST_KEYS as readonly string[]).includes(key)) {
      return `${name}: "toolhost" has an unknown key "${key.slice(0, 64)}" (it takes ${TOOLHOST_KEYS.join(', ')})`;
    }
  }
  for (const field of ['read', 'write'] as const) {
    const paths = stringList(value[field]);
    if (paths === undefined) return `${name}: "toolhost.${field}" must be a list of paths`;
    for (const path of paths) {
      const absolute = resolve(folder, path);
      if ((await stat(absolute).catch(() => undefined)) === undefined) {
        return `${name}: "toolhost.${field}" names ${absolute}, which does not exist (create it, or remove it from the grant)`;
      }
      grants[field].push(absolute);
    }
  }
  const net = value['net'];
  if (Array.isArray(net)) {
    const rules = parseNetRules(net);
    if (!rules.ok) return `${name}: "toolhost.net" is not a list of hosts: ${rules.reason}`;
    grants.net = net.length === 0 ? false : (net as string[]);
  } else if (net !== undefined && typeof net !== 'boolean') {
    return `${name}: "toolhost.net" must be true, false or a list of hosts`;
  } else grants.net = net === true;
  const secrets = parseSecretBindings(value['secrets'], grants.net, 'the server');
  if (!secrets.ok) return `${name}: "toolhost.secrets" is refused: ${secrets.reason}`;
  const unsupported = secrets.bindings.length === 0 ? undefined : secretsUnsupported();
  if (unsupported !== undefined) return `${name}: "toolhost.secrets" is refused: ${unsupported}`;
  grants.secrets = secrets.bindings;
  const allowEnv = stringList(value['allowEnv']);
  if (allowEnv === undefined || !allowEnv.every((entry) => ENV_NAME.test(entry))) {
    return `${name}: "toolhost.allowEnv" must be a list of environment variable names`;
  }
  grants.allowEnv = allowEnv;
  const timeoutMs = value['timeoutMs'];
  if (timeoutMs !== undefined) {
    if (
      typeof timeoutMs !== 'number' ||
      !Number.isInteger(timeoutMs) ||
      timeoutMs <= 0 ||
      timeoutMs > MAX_TIMEOUT_MS
    ) {
      return `${name}: "toolhost.timeoutMs" must be a positive integer of milliseconds, got ${JSON.stringify(timeoutMs)}`;
    }
    grants.timeoutMs = timeoutMs;
  }
  const prefix = value['prefix'];
  if (prefix !== undefined) {
    if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
      return `${name}: "toolhost.prefix" must match ${PREFIX_PATTERN.source}`;
    }
    grants.prefix = prefix;
  }
  return grants;
}

/** `./x` and `../x` are paths relative to the config's folder; anything else is passed as written. */
function resolveRelative(arg: string, folder: string): string {
  if (isAbsolute(arg) || !(arg.startsWith('./') || arg.startsWith('../') || arg === '.' || arg === '..')) {
    return arg;
  }
  return resolve(folder, arg);
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 1024) return undefined;
  return value.every((entry) => typeof entry === 'string') ? [...(value as string[])] : undefined;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (!isRecord(value)) return undefined;
  const entries = Object.entries(value);
  if (!entries.every(([key, entry]) => ENV_NAME.test(key) && typeof entry === 'string')) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
