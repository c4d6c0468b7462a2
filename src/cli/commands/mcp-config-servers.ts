/**
 * `toolhost mcp-config <servers.json>`: what each MCP server of a wrapped config will be allowed
 * inside toolhost's sandbox (its grants, as the config's `toolhost` object gives them), or why it
 * will be left out; and a warning when the file is one a client reads itself (it would go on
 * starting those servers unsandboxed beside toolhost).
 */
import { basename } from 'node:path';
import { showHidden } from '../../declaration/visible-text.js';
import { parseServersConfig, readServersConfigJson, type ServerEntry } from '../../mcp/servers/config.js';

/** One server of a wrapped config, as `mcp-config --json` prints it. */
export type WrappedServer =
  | {
      config: string;
      name: string;
      command: string;
      args: string[];
      grants: {
        /** Besides what its command needs to run (its program, its package and dependencies). */
        read: string[];
        /** Besides a tmp folder of its own. */
        write: string[];
        net: boolean | string[];
        /** Secret name to the hosts its placeholder is swapped for its value on (`--secret` grants values). */
        secrets: Record<string, string[]>;
        allowEnv: string[];
        prefix: string | null;
        timeoutMs: number | null;
      };
      /** Names of the variables its `env` sets (their values are passed as written). */
      env: string[];
    }
  | { config: string; name: string; leftOut: string };

/** The files MCP clients read their own servers from: wrapping one in place runs its servers twice. */
const CLIENT_FILES = new Set(['claude_desktop_config.json', '.mcp.json', 'mcp.json', 'settings.json']);

/** The servers of every path that is an MCP client config (other paths give none). */
export async function wrappedServers(paths: readonly string[]): Promise<WrappedServer[]> {
  const found: WrappedServer[] = [];
  for (const config of paths) {
    const parsed = await readServersConfigJson(config);
    if (parsed === undefined) continue;
    for (const server of await parseServersConfig(parsed, config)) {
      found.push(
        server.ok ? wrapped(config, server.entry) : { config, name: server.name, leftOut: server.reason },
      );
    }
  }
  return found;
}

function wrapped(config: string, entry: ServerEntry): WrappedServer {
  return {
    config,
    name: entry.name,
    command: entry.command,
    args: entry.args,
    grants: {
      read: entry.read,
      write: entry.write,
      net: entry.net === true || entry.net === false ? entry.net : [...entry.net],
      secrets: Object.fromEntries(entry.secrets.map((binding) => [binding.name, [...binding.hosts]])),
      allowEnv: entry.allowEnv,
      prefix: entry.prefix ?? null,
      timeoutMs: entry.timeoutMs ?? null,
    },
    env: Object.keys(entry.env),
  };
}

/** What stderr says of the wrapped servers: each one's grants, and what to look out for. */
export function serverGrantLines(servers: readonly WrappedServer[], lock: string | undefined): string[] {
  if (servers.length === 0) return [];
  const lines: string[] = [];
  // What a config says is shown, never obeyed by the terminal: control characters are made visible.
  const push = (line: string) => lines.push(showHidden(line));
  const configs = [...new Set(servers.map((server) => server.config))];
  for (const config of configs) {
    push(`toolhost: the MCP servers of ${config} will run in bubblewrap, each with only these grants:`);
    for (const server of servers.filter((candidate) => candidate.config === config)) {
      if ('leftOut' in server) {
        push(`  ${server.name}: left out: ${server.leftOut}`);
        continue;
      }
      const { grants } = server;
      const list = (items: readonly string[]) => (items.length === 0 ? 'nothing' : items.join(', '));
      push(`  ${server.name}: ${[server.command, ...server.args].join(' ')}`);
      push(`    reads: its program, its package and dependencies; ${list(grants.read)}`);
      push(`    writes: a tmp folder of its own; ${list(grants.write)}`);
      push(
        `    network: ${
          grants.net === false
            ? 'none'
            : `${grants.net === true ? 'any host' : grants.net.join(', ')}, through an egress proxy of its own`
        }`,
      );
      const secrets = Object.entries(grants.secrets);
      if (secrets.length > 0) {
        push(
          `    secrets (a placeholder in its environment, the value swapped in on these hosts when toolhost serve --secret NAME grants it): ${secrets.map(([name, hosts]) => `${name} on ${hosts.join(', ')}`).join('; ')}`,
        );
      }
      push(
        `    host environment: ${list(grants.allowEnv)}${server.env.length > 0 ? `; set by the config: ${server.env.join(', ')}` : ''}`,
      );
      push(
        `    tools named: ${grants.prefix === null ? 'as the server names them' : `${grants.prefix}_<name>`}; timeout: ${grants.timeoutMs === null ? "the host's" : `${grants.timeoutMs} ms`}`,
      );
    }
    if (CLIENT_FILES.has(basename(config))) {
      push(
        `toolhost: warning: ${config} is a file MCP clients read themselves: a client given both it and this config starts its servers twice, once without a sandbox. Move its "mcpServers" to a file of their own (e.g. toolhost-servers.json) and wrap that one`,
      );
    }
  }
  push(
    lock === undefined
      ? 'toolhost: not pinned: review the tools (toolhost list), pin them (toolhost pin), and pass --lock so a changed server is withheld'
      : `toolhost: serve will offer only what ${lock} pins`,
  );
  return lines;
}
