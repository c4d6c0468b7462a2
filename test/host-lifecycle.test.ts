/**
 * Closing a host: calls still pending answer HOST_CLOSED and never hang, calls after close answer
 * HOST_CLOSED, the host's own mistakes after close throw, and the process can exit right after.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ToolHostError } from '../dist/src/index.js';
import { ALL_TIERS } from './support/boundary.js';
import { failed, fixtureModule, loadEcho, nextEvent, statusesOf, useHosts } from './support/host-harness.js';

const makeHost = useHosts();

describe.each(ALL_TIERS)("isolation: '%s', close", (isolation) => {
  it('a running call and a queued one both answer HOST_CLOSED, and close does not wait for a looping tool', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-progress-then-loop.js'));
    const looping = nextEvent(host, 'progress');

    const running = host.call('call_progress_then_loop', {});
    await looping;
    const queued = host.call('call_progress_then_loop', {});
    await host.close();

    const closedDuringCall = failed('HOST_CLOSED', 'the tool host closed during the call');
    expect(await running).toStrictEqual(closedDuringCall);
    expect(await queued).toStrictEqual(closedDuringCall);
  });

  it('calls after close answer HOST_CLOSED; load and register throw HOST_CLOSED; close again is fine', async () => {
    const { host } = await makeHost({ isolation });
    await loadEcho(host);
    await host.close();

    expect(await host.call('echo', { text: 'x' })).toStrictEqual(
      failed('HOST_CLOSED', 'the tool host is closed'),
    );
    await expect(host.load(fixtureModule('echo.js'))).rejects.toMatchObject({
      name: 'ToolHostError',
      code: 'HOST_CLOSED',
      message: 'The tool host is closed',
    });
    expect(() =>
      host.register({
        name: 'late',
        description: 'Too late',
        parameterSchema: { type: 'object' },
        run: () => 'x',
      }),
    ).toThrow(ToolHostError);
    await expect(host.close()).resolves.toBeUndefined();
  });

  it('a declaration being read when the host closes ends the read without blaming the module', async () => {
    const { host, logger } = await makeHost({ isolation, readTimeoutMs: 60_000 });
    const path = fixtureModule('decl-top-level-loop.js');

    const loading = host.load(path);
    const closing = host.close();
    const report = await loading;
    await closing;

    expect(statusesOf(report.modules)).toStrictEqual([
      {
        path,
        source: path,
        state: 'left-out',
        code: 'DECLARATION_EXITED',
        reason: 'the tool host closed before the declaration was read',
      },
    ]);
    expect(logger.matching('warn', 'exited (code')).toEqual([]);
  });

  it('the process exits on its own right after close, with workers, a looping call and a re-read pending', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'toolhost-exit-'));
    try {
      const script = join(directory, 'host-then-exit.mjs');
      const index = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src', 'index.js')).href;
      await writeFile(
        script,
        `import { ToolHost } from ${JSON.stringify(index)};
const host = new ToolHost({ isolation: ${JSON.stringify(isolation)}, dataDir: ${JSON.stringify(directory)}, readTimeoutMs: 1000, logger: { info() {}, warn() {}, error() {} } });
await host.load(${JSON.stringify(fixtureModule('echo.js'))});
await host.load(${JSON.stringify(fixtureModule('call-progress-then-loop.js'))});
await host.load(${JSON.stringify(fixtureModule('decl-top-level-await.js'))});
const echoed = await host.call('echo', { text: 'hello' });
const started = new Promise((resolve) => host.once('progress', resolve));
const looping = host.call('call_progress_then_loop', {});
await started;
await host.close();
console.log(JSON.stringify([echoed.isError, (await looping).error.code, host.status().map((s) => s.state)]));
`,
      );

      // No process.exit in the script: it ends only if close() left nothing running. The timeout
      // only bounds a failure.
      const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 45_000 });

      expect(JSON.parse(stdout)).toEqual([false, 'HOST_CLOSED', ['offered', 'offered', 'reread-pending']]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe("close, with a call of the host's own tool pending", () => {
  it("a pending call of the host's own tool answers HOST_CLOSED at close", async () => {
    const { host } = await makeHost();
    host.register({
      name: 'host_waits',
      description: 'Waits for its signal',
      parameterSchema: { type: 'object' },
      timeoutMs: 600_000,
      run: (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
    });

    const pending = host.call('host_waits', {});
    await host.close();

    expect(await pending).toStrictEqual(failed('HOST_CLOSED', 'the tool host closed during the call'));
  });
});
