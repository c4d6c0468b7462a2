/**
 * Hostile MCP servers that try to get out of their sandbox, loaded from one config beside an honest
 * server on one host: reading a host secret file outside every grant, reading the host's
 * environment, writing outside `write`, connecting to loopback ports the test listens on, a fork
 * bomb and memory bombs. Each attack is refused or contained, the host lives, the attacked server
 * answers its next call, the honest server was never restarted, and no secret reaches any outcome.
 * Every route is shown to work where it is granted (or unconfined: mcp-servers-fixtures.test.ts),
 * so a refusal here is the sandbox's doing.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_MAX_PIDS } from '../dist/src/host/server-settings.js';
import { answered } from './support/host-harness.js';
import { useLocalServers } from './support/local-servers.js';
import { fixtureEntry, writeServersConfig } from './support/mcp-server-fixtures.js';
import { textOf, useServersHost } from './support/servers-host.js';

const SECRET = `host-secret-${randomBytes(8).toString('hex')}`;
const ENV_SECRET_NAME = `TOOLHOST_HOSTILE_HOST_SECRET_${randomBytes(4).toString('hex').toUpperCase()}`;
const ENV_SECRET = `env-secret-${randomBytes(8).toString('hex')}`;
const ALLOWED_NAME = 'TOOLHOST_HOSTILE_ALLOWED';
/** The fork bomb's `sleep` argument: a number no other process on the machine sleeps for. */
const BOMB_MARKER = `3600.${Date.now() % 1_000_000}`;
const DAEMON_MARKER = `3601.${Date.now() % 1_000_000}`;

/** The host's processes whose command line holds `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (commandLine.split('\0').includes(marker)) found.push(Number(entry));
  }
  return found;
}

describe('hostile MCP servers that try to leave their sandbox, beside an honest one', () => {
  const local = useLocalServers();
  const servers = useServersHost({ processMemoryMb: 256 });
  let granted: { read: string; write: string };
  let secretFile: string;

  beforeAll(async () => {
    // The host's own environment holds a secret; one other variable is allowed through by name.
    process.env[ENV_SECRET_NAME] = ENV_SECRET;
    process.env[ALLOWED_NAME] = 'allowed value';
    granted = { read: join(servers.folder, 'granted-read'), write: join(servers.folder, 'granted-write') };
    await mkdir(granted.read);
    await mkdir(granted.write);
    await writeFile(join(granted.read, 'granted.txt'), 'granted content');
    await mkdir(join(servers.folder, 'secrets'));
    secretFile = join(servers.folder, 'secrets', 'secret.txt');
    await writeFile(secretFile, SECRET);
    const config = await writeServersConfig(servers.folder, {
      honest: fixtureEntry('honest'),
      reader: fixtureEntry('read-file', { toolhost: { read: [granted.read] } }),
      env: fixtureEntry('print-env', {
        env: { FROM_CONFIG: 'config value' },
        toolhost: { allowEnv: [ALLOWED_NAME] },
      }),
      writer: fixtureEntry('write-file', { toolhost: { read: [granted.read], write: [granted.write] } }),
      connector: fixtureEntry('connect-port'),
      forks: fixtureEntry('fork-bomb', { toolhost: { timeoutMs: 30_000 } }),
      memory: fixtureEntry('memory-bomb', { toolhost: { timeoutMs: 30_000 } }),
    });
    const report = await servers.host.load(config);
    expect(report.modules.filter((module) => module.state !== 'offered')).toEqual([]);
    await servers.honestFine();
  });
  afterAll(() => {
    delete process.env[ENV_SECRET_NAME];
    delete process.env[ALLOWED_NAME];
  });

  it('reads a file inside its read grant', async () => {
    expect(textOf(await servers.call('read_file', { path: join(granted.read, 'granted.txt') }))).toBe(
      'fs: read: granted content\nlink: read: granted content\ncat: read: granted content',
    );
  });

  it('cannot read a host secret file outside every grant, by any route, nor see its folder', async () => {
    const outcome = await servers.call('read_file', { path: secretFile });
    expect(outcome.isError).toBe(false);
    expect(textOf(outcome)).toBe('fs: denied: ENOENT\nlink: denied: ENOENT\ncat: denied: exit 1');
    // bubblewrap makes the folders above a grant to mount it on: their names show, nothing else.
    const listing = textOf(await servers.call('list_folder', { path: servers.folder }));
    expect(listing).not.toContain('secrets');
    expect(textOf(await servers.call('list_folder', { path: join(servers.folder, 'secrets') }))).toMatch(
      /^denied: /,
    );
    await servers.honestFine();
  });

  it("sees only its entry's env and the allowed names, never the host's other variables", async () => {
    const text = textOf(await servers.call('print_env'));
    expect(text).toContain('"FROM_CONFIG":"config value"');
    expect(text).toContain(`"${ALLOWED_NAME}":"allowed value"`);
    expect(text).not.toContain(ENV_SECRET_NAME);
    expect(text).not.toContain(ENV_SECRET);
    await servers.honestFine();
  });

  it('writes inside its write grant, and nowhere else: not outside, not in its read grant', async () => {
    const inside = join(granted.write, 'out.txt');
    expect(textOf(await servers.call('write_file', { path: inside, text: 'inside' }))).toBe(
      'fs: wrote\nsh: wrote',
    );
    expect(await readFile(inside, 'utf8')).toBe('inside');

    for (const outside of [join(servers.folder, 'escaped.txt'), join(granted.read, 'escaped.txt')]) {
      const text = textOf(await servers.call('write_file', { path: outside, text: 'escaped' }));
      expect(text).toMatch(/^fs: denied: EROFS\nsh: denied: exit \d+$/);
      expect(existsSync(outside)).toBe(false);
      expect(existsSync(`${outside}.sh`)).toBe(false);
    }
    await servers.honestFine();
  });

  it('cannot reach a loopback port that is not granted, by socket or by fetch', async () => {
    const socket = textOf(await servers.call('connect_socket', { host: '127.0.0.1', port: local.tcpPort }));
    expect(socket).toBe('socket: denied: ECONNREFUSED');
    const fetched = textOf(await servers.call('fetch_url', { url: local.httpUrl }));
    expect(fetched).toBe('fetch: denied: ECONNREFUSED');
    expect(local.reached).toEqual({ requests: [], connections: 0 });
    await servers.honestFine();
  });

  it('a fork bomb stops at the pids limit, and the server answers after it', async () => {
    const outcome = await servers.call('fork_bomb', { attempts: 2000, marker: BOMB_MARKER });
    // Refused at the sandbox's pids limit (threads count too), or the server ended trying.
    if (!outcome.isError) expect(textOf(outcome)).toMatch(/^spawned: \d+ of 2000; refused: EAGAIN$/);
    expect((await processesWith(BOMB_MARKER)).length).toBeLessThan(SERVER_MAX_PIDS);
    await servers.honestFine();
    expect(await servers.call('bomb_say')).toStrictEqual(answered('still here'));
  });

  it('a memory bomb in the server is TOOL_OUT_OF_MEMORY, naming the limit, and the server answers after it', async () => {
    const outcome = await servers.call('memory_bomb', { megabytes: 1024, where: 'server' });
    expect(outcome.isError).toBe(true);
    expect(outcome.error?.code).toBe('TOOL_OUT_OF_MEMORY');
    expect(textOf(outcome)).toContain('256 MB, processMemoryMb');
    expect(await servers.call('memory_say')).toStrictEqual(answered('still here'));
    await servers.honestFine();
  });

  it('a memory bomb in a child the server starts is held by the same limit', async () => {
    const outcome = await servers.call('memory_bomb', { megabytes: 1024, where: 'child' });
    // The kernel ends the child (the server then says so) or the server with it.
    if (outcome.isError) expect(outcome.error?.code).toBe('TOOL_OUT_OF_MEMORY');
    else expect(textOf(outcome)).toBe('child ended: SIGKILL');
    expect(await servers.call('memory_say')).toStrictEqual(answered('still here'));
    await servers.honestFine();
  });

  it('no outcome holds the secret file or the secret variable', () => {
    const everything = JSON.stringify(servers.outcomes);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(ENV_SECRET);
  });

  it('a process a server daemonizes (a session of its own, its parent gone) is still held in the sandbox', async () => {
    expect(await servers.call('daemonize', { marker: DAEMON_MARKER })).toStrictEqual(answered('daemonized'));
    expect(await servers.call('bomb_say')).toStrictEqual(answered('still here'));
  });

  it('closing the host ends every server and every process they started', async () => {
    await servers.host.close();
    expect(await processesWith(BOMB_MARKER)).toEqual([]);
    expect(await processesWith(DAEMON_MARKER)).toEqual([]);
  });
});
