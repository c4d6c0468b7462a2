/**
 * Reading an MCP client config: each entry parsed strictly, relative paths resolved against the
 * config's folder, a reason per bad entry (the others go on), and a throw only for a file that is
 * no config at all.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServersConfig, readServersConfigJson } from '../dist/src/mcp/servers/config.js';
import { freshDir } from './support/cli-run.js';

let work: ReturnType<typeof freshDir>;

beforeAll(() => {
  work = freshDir('mcp-config');
  mkdirSync(join(work.path, 'data/out'), { recursive: true });
});
afterAll(() => work?.remove());

const parse = (servers: unknown) =>
  parseServersConfig({ mcpServers: servers } as Record<string, unknown>, join(work.path, 'servers.json'));

describe('an MCP client config', () => {
  it('resolves ./ and ../ arguments and the grants against its folder, and passes other arguments as written', async () => {
    const [server] = await parse({
      fs: {
        command: 'node',
        args: ['./server.js', '--flag', 'warn', '../up', '/abs'],
        env: { LOG_LEVEL: 'warn' },
        toolhost: {
          read: ['./data'],
          write: ['data/out'],
          allowEnv: ['GITHUB_TOKEN'],
          timeoutMs: 1234,
          prefix: 'fs',
        },
      },
    });
    expect(server).toEqual({
      ok: true,
      entry: {
        name: 'fs',
        command: 'node',
        args: [join(work.path, 'server.js'), '--flag', 'warn', join(work.path, '../up'), '/abs'],
        env: { LOG_LEVEL: 'warn' },
        read: [join(work.path, 'data')],
        write: [join(work.path, 'data/out')],
        net: false,
        secrets: [],
        allowEnv: ['GITHUB_TOKEN'],
        timeoutMs: 1234,
        prefix: 'fs',
        folder: work.path,
        config: join(work.path, 'servers.json'),
      },
    });
  });

  it('gives each bad entry its own reason and keeps the good ones', async () => {
    const servers = await parse({
      good: { command: 'node' },
      remote: { url: 'https://example.com/mcp' },
      sse: { type: 'sse', command: 'x' },
      off: { command: 'node', disabled: true },
      nocommand: { args: [] },
      badargs: { command: 'node', args: 'x' },
      badenv: { command: 'node', env: { A: 1 } },
      unknown: { command: 'node', toolhost: { sandbox: {} } },
      emptysecret: { command: 'node', toolhost: { net: ['api.example.com'], secrets: { TOKEN: [] } } },
      wildsecret: { command: 'node', toolhost: { net: true, secrets: { TOKEN: ['*.example.com'] } } },
      allowedsecret: {
        command: 'node',
        toolhost: { net: ['api.example.com'], secrets: { TOKEN: ['api.example.com'] }, allowEnv: ['TOKEN'] },
      },
      missing: { command: 'node', toolhost: { read: ['./nope'] } },
      badprefix: { command: 'node', toolhost: { prefix: 'has space' } },
      badtimeout: { command: 'node', toolhost: { timeoutMs: -5 } },
      badnet: { command: 'node', toolhost: { net: 'everything' } },
      notobject: 'node',
    });
    const reasons = Object.fromEntries(
      servers.map((server) => (server.ok ? [server.entry.name, 'ok'] : [server.name, server.reason])),
    );
    expect(reasons).toEqual({
      good: 'ok',
      remote: 'remote is a remote server (url): toolhost hosts stdio servers only',
      sse: 'sse is a remote server (url): toolhost hosts stdio servers only',
      off: 'off is disabled in the config ("disabled": true)',
      nocommand: 'nocommand has no "command" (a string naming the program to start)',
      badargs: 'badargs: "args" must be a list of strings',
      badenv: 'badenv: "env" must be an object of string values',
      unknown:
        'unknown: "toolhost" has an unknown key "sandbox" (it takes read, write, net, secrets, allowEnv, timeoutMs, prefix)',
      emptysecret:
        'emptysecret: "toolhost.secrets" is refused: secret TOKEN is not bound to a list of 1 to 32 hosts',
      wildsecret:
        'wildsecret: "toolhost.secrets" is refused: secret TOKEN\'s host "*.example.com" is a wildcard: a secret is bound to exact hosts',
      allowedsecret:
        'allowedsecret: secret TOKEN is bound in "toolhost.secrets" and also set by "toolhost.allowEnv", which would hand the server its value: remove it from there',
      missing: `missing: "toolhost.read" names ${join(work.path, 'nope')}, which does not exist (create it, or remove it from the grant)`,
      badprefix: 'badprefix: "toolhost.prefix" must match ^[a-zA-Z0-9_-]{1,32}$',
      badtimeout: 'badtimeout: "toolhost.timeoutMs" must be a positive integer of milliseconds, got -5',
      badnet: 'badnet: "toolhost.net" must be true, false or a list of hosts',
      notobject: 'notobject is not an object with a "command"',
    });
    // Each carries its code: remote and disabled servers are unsupported, the rest invalid.
    const unsupported = servers.flatMap((server) =>
      !server.ok && server.code === 'SERVER_UNSUPPORTED' ? [server.name] : [],
    );
    expect(unsupported).toEqual(['remote', 'sse', 'off']);
  });

  it('is recognised by its top-level mcpServers; a package.json or other JSON is not one', async () => {
    const config = join(work.path, 'claude_desktop_config.json');
    writeFileSync(config, JSON.stringify({ mcpServers: {}, globalShortcut: '' }));
    expect(await readServersConfigJson(config)).toEqual({ mcpServers: {}, globalShortcut: '' });
    const other = join(work.path, 'other.json');
    writeFileSync(other, JSON.stringify({ servers: {} }));
    expect(await readServersConfigJson(other)).toBeUndefined();
    const manifest = join(work.path, 'package.json');
    writeFileSync(manifest, JSON.stringify({ mcpServers: {} }));
    expect(await readServersConfigJson(manifest)).toBeUndefined();
  });

  it('throws one clear sentence when mcpServers is not an object of servers', async () => {
    await expect(parse(['x'])).rejects.toThrow(/"mcpServers" is not an object of servers/);
  });
});
