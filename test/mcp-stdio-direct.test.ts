/**
 * `toolhost serve` over stdio in the process tier, where it serves in one process (no relay, no
 * hosting process): the official clients list and call; a hostile package that writes to stdout by
 * every means, opens its parent's stdout through /proc and exits mid-call never reaches the
 * protocol; the client's lines are bounded as the relay bounds them; closing stdin and SIGTERM end
 * serve with exit code 0. Once in a bubblewrap sandbox, once under Node's permission model (a PATH
 * without bwrap), the two holds under which serve goes direct.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStdout } from '../dist/src/mcp/stdio-direct.js';
import { freshDir, runCli } from './support/cli-run.js';
import { connectStdio } from './support/mcp-clients.js';
import { childPids, exited, GOOD, HOSTILE, hostTempDirs } from './support/mcp-serve.js';
import {
  connectRecorded,
  errorCode,
  expectProtocolOnly,
  type RecordedServe,
} from './support/recorded-serve.js';

const HOLDS = [
  { hold: 'sandbox', env: {}, line: /in a bubblewrap sandbox/ },
  // Without bwrap on PATH the process tier confines with the permission model instead.
  { hold: 'permission-model', env: { PATH: '' }, line: /under Node's permission model/ },
] as const;

/** The command lines of `pid`'s child processes: none of them is a hosting process behind a relay. */
function childCommands(pid: number): string[] {
  return childPids(pid).map((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      return '';
    }
  });
}

describe.each(HOLDS)(
  'serve over stdio, direct, a hostile package beside a good one ($hold)',
  ({ hold, env, line }) => {
    const tmp = freshDir(`toolhost-mcp-direct-${hold}`);
    let serve: RecordedServe;
    const call = (name: string, args: Record<string, unknown> = {}) => serve.call(name, args);
    const expectGoodAnswers = (text: string) => serve.expectGoodAnswers(text);

    beforeAll(async () => {
      // A named pipe as stdout, as many clients give: the one kind of stdout /proc can open again.
      serve = await connectRecorded(['--heap-mb', '32', GOOD, HOSTILE], tmp.path, {
        stdout: 'fifo',
        isolation: 'default',
        env,
      });
    });
    afterAll(async () => {
      if (serve !== undefined && serve.transport.child.exitCode === null) {
        await serve.client.close();
        await exited(serve.transport.child);
      }
      tmp.remove();
    });

    it('serves from one process: no hosting process behind a relay', async () => {
      await serve.transport.stderr.waitFor(line);
      await expectGoodAnswers('direct');
      const pid = serve.transport.child.pid as number;
      expect(childCommands(pid).filter((command) => command.includes('serve-child'))).toEqual([]);
    });

    it('a tool that calls process.exit is a tool error, and the next call works', async () => {
      const result = await call('exit_now');
      expect(result.isError).toBe(true);
      expect(errorCode(result)).toBe('TOOL_EXITED');
      await expectGoodAnswers('after exit');
    });

    it('a tool writing to stdout by every means (a child process too) reaches nothing but stderr', async () => {
      const result = await call('noisy');
      if (hold === 'sandbox') {
        // Its child process, handed descriptor 3 (the package process's channel to serve), wrote junk
        // there: serve reads that as the process breaking the protocol, a tool error.
        expect(errorCode(result)).toBe('TOOL_CRASHED');
      } else {
        // Every means ran in the package's own process or was refused there.
        expect(result.isError).toBe(false);
        const { refused } = result.structuredContent as { refused: Record<string, string> };
        expect(refused).toMatchObject({ 'child process': 'ERR_ACCESS_DENIED' });
        await serve.transport.stderr.waitFor(/the tool "noisy" printed: junk from noisy via console\.log/);
      }
      await expectGoodAnswers('after the noise');
    });

    it("a tool opening its parent's stdout through /proc does not reach the client", async () => {
      const result = await call('parent_stdout');
      if (hold === 'permission-model') {
        expect(errorCode(result)).toBe('TOOL_ACCESS_DENIED');
      } else {
        // In the sandbox's own process namespace its parent is bubblewrap, whose stdout is /dev/null.
        expect(result.content).toEqual([{ type: 'text', text: 'wrote to the parent process' }]);
      }
      await expectGoodAnswers('after /proc');
      expect(serve.logged).toEqual([]);
    });

    it('drops a client line over 16 MiB and a line that is not JSON-RPC, and answers the next', async () => {
      const stdin = serve.transport.child.stdin;
      stdin?.write('not json\n');
      stdin?.write(
        `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"${'x'.repeat(17 * 1024 * 1024)}"}}\n`,
      );
      await expectGoodAnswers('after the long line');
      expect(serve.transport.messages.some((message) => 'id' in message && message.id === 'long')).toBe(
        false,
      );
    });

    it('every line on stdout was a JSON-RPC message, none of them from the hostile tool', () => {
      expectProtocolOnly(serve, ['junk from noisy', 'forged', 'written through /proc']);
    });

    if (hold === 'sandbox') {
      it('ends with exit code 0 when the client closes stdin', async () => {
        await serve.client.close();
        expect(await exited(serve.transport.child)).toEqual({ code: 0, signal: null });
      });
    } else {
      it('ends with exit code 0 on SIGTERM, answering the call still running', async () => {
        let started: () => void = () => {};
        const progress = new Promise<void>((resolve) => {
          started = resolve;
        });
        const running = serve.client.callTool({ name: 'stall', arguments: {} }, undefined, {
          onprogress: () => started(),
        });
        await progress;
        const pid = serve.transport.child.pid as number;
        expect(hostTempDirs(tmp.path, pid)).toHaveLength(1);
        serve.transport.child.kill('SIGTERM');
        expect(await exited(serve.transport.child)).toEqual({ code: 0, signal: null });
        const answer = await running;
        expect(answer).toMatchObject({ isError: true, _meta: { 'toolhost/errorCode': 'HOST_CLOSED' } });
        expect(hostTempDirs(tmp.path, pid)).toEqual([]);
      });
    }
  },
);

describe('serve over stdio, direct, its start and its end', () => {
  const tmp = freshDir('toolhost-mcp-direct-v2');
  afterAll(() => tmp.remove());

  it('names a path that does not exist when stdin is already at its end (exit 2, not a silent 0)', async () => {
    const missing = join(tmp.path, 'nowhere');
    const result = await runCli(['serve', '--isolation', 'process', missing], {
      tmpDir: tmp.path,
      input: '',
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`toolhost: no such file or directory: ${missing}\n`);
  });

  it('answers a request once when the client closes stdin at once', async () => {
    const ping = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`;
    const result = await runCli(['serve', '--isolation', 'process', GOOD], { tmpDir: tmp.path, input: ping });
    expect(result.code).toBe(0);
    const answers = result.stdout
      .split('\n')
      .filter((text) => text !== '')
      .map((text) => JSON.parse(text) as { id?: unknown });
    expect(answers).toEqual([expect.objectContaining({ jsonrpc: '2.0', id: 1 })]);
  });

  it("keeps the relay under Node's permission model when a package may load native addons (their code is not held by it)", async () => {
    const serve = await connectRecorded(['--allow-addons', 'some-addon-package', GOOD], tmp.path, {
      isolation: 'default',
      env: { PATH: '' },
    });
    try {
      await serve.transport.stderr.waitFor(/under Node's permission model/);
      await serve.expectGoodAnswers('relayed');
      const pid = serve.transport.child.pid as number;
      expect(childCommands(pid).filter((command) => command.includes('serve-child'))).toHaveLength(1);
    } finally {
      await serve.client.close();
      await exited(serve.transport.child);
    }
  });

  it('lists and calls at the 2026-07-28 revision', async () => {
    const client = await connectStdio('2026-07-28', ['--isolation', 'process', GOOD], tmp.path);
    try {
      expect(await client.listToolNames()).toContain('say');
      expect(await client.call('say', { text: 'v2' })).toMatchObject({
        content: [{ type: 'text', text: 'you said: v2' }],
      });
    } finally {
      await client.close();
    }
  });
});

/** Everything a stream holds now (one `read()` returns one chunk on Node 26). */
function readAll(stream: PassThrough): string {
  let text = '';
  for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) {
    text += String(chunk);
  }
  return text;
}

describe('claimStdout', () => {
  it('leaves stdout to the protocol: any other write there, a pipe() into it too, goes to stderr', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const protocol = claimStdout(stdout, stderr);
    stdout.write('a dependency printing\n');
    const worker = new PassThrough();
    // Piped data flows over later turns of the event loop (more of them on newer Node lines): its
    // end is the handshake that all of it was written.
    const piped = once(worker, 'end');
    worker.end('a worker thread printing\n').pipe(stdout);
    await new Promise<void>((resolve) => protocol('{"jsonrpc":"2.0","method":"x"}\n', resolve));
    await piped;
    await new Promise((resolve) => setImmediate(resolve));
    expect(readAll(stdout)).toBe('{"jsonrpc":"2.0","method":"x"}\n');
    expect(readAll(stderr)).toBe('a dependency printing\na worker thread printing\n');
  });
});
