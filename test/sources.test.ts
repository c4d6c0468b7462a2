import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ModuleEvent,
  type ModuleStatus,
  outcomeText,
  ToolHost,
  type ToolSourceHandle,
} from '../dist/src/index.js';
import { FakeClock, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, whenStatus, writePackage } from './support/tool-packages.js';

const run = promisify(execFile);

let root: string;
let host: ToolHost;
let handle: ToolSourceHandle | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-sources-');
  host = new ToolHost({ isolation: 'worker', dataDir: join(root, '.data'), logger: recordingLogger() });
});

afterEach(async () => {
  await handle?.close();
  handle = undefined;
  await host.close();
  await removeDir(root);
});

const offered = (statuses: ModuleStatus[], name: string, version?: string) =>
  statuses.some(
    (s) => s.name === name && s.state === 'offered' && (version === undefined || s.version === version),
  );

async function packagesDir(): Promise<string> {
  const dir = join(root, 'packages');
  await mkdir(dir);
  return dir;
}

describe('a watched folder of tool packages', () => {
  it('offers a package added to the folder, and calls run its code', async () => {
    const dir = await packagesDir();
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });
    expect(host.list()).toEqual([]);

    // Written elsewhere and moved in, as an installer would.
    await writePackage(join(root, 'staging'), { 'greet.js': toolSource('greet', "'hello v1'") });
    await rename(join(root, 'staging'), join(dir, 'greeter'));
    await whenStatus(host, (statuses) => offered(statuses, 'greet'));

    expect(host.list().map((tool) => tool.name)).toEqual(['greet']);
    expect(outcomeText(await host.call('greet', {}))).toBe('hello v1');
  });

  it('reads a changed module again as a new version, and no later call runs the old code', async () => {
    const dir = await packagesDir();
    await writePackage(join(dir, 'greeter'), { 'greet.js': toolSource('greet', "'hello v1'") });
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });
    expect(outcomeText(await host.call('greet', {}))).toBe('hello v1');
    const [before] = host.status();

    await writeFile(join(dir, 'greeter', 'tools', 'greet.js'), toolSource('greet', "'hello v2'"));
    await whenStatus(host, (statuses) =>
      statuses.some((s) => s.name === 'greet' && s.version !== before?.version),
    );

    expect(outcomeText(await host.call('greet', {}))).toBe('hello v2');
    expect(outcomeText(await host.call('greet', {}))).toBe('hello v2');
  });

  it('lets a call already running on the old version finish on it', async () => {
    const dir = await packagesDir();
    const flag = join(root, 'release');
    // v1 reports that it started, then waits for the test's flag file.
    const waitingRun = `(async () => {
      ctx.emit('started');
      const { existsSync } = await import('node:fs');
      while (!existsSync(${JSON.stringify(flag)})) await new Promise((r) => setTimeout(r, 5));
      return 'finished on v1';
    })()`;
    await writePackage(join(dir, 'slow'), { 'slow.js': toolSource('slow', waitingRun) });
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });

    const started = new Promise<void>((resolve) => host.once('progress', () => resolve()));
    const running = host.call('slow', {});
    await started;

    const v1 = host.status()[0]?.version;
    await writeFile(join(dir, 'slow', 'tools', 'slow.js'), toolSource('slow', "'v2 answers at once'"));
    await whenStatus(host, (statuses) => statuses.some((s) => s.name === 'slow' && s.version !== v1));

    expect(outcomeText(await host.call('slow', {}))).toBe('v2 answers at once');
    await writeFile(flag, '');
    expect(outcomeText(await running)).toBe('finished on v1');
  });

  it('stops offering a package removed from the folder', async () => {
    const dir = await packagesDir();
    await writePackage(join(dir, 'a'), { 'a.js': toolSource('tool_a', "'a'") });
    await writePackage(join(dir, 'b'), { 'b.js': toolSource('tool_b', "'b'") });
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });
    expect(
      host
        .list()
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['tool_a', 'tool_b']);

    const removed = new Promise<ModuleStatus>((resolve) =>
      host.on('module', (event) => {
        if (event.type === 'removed') resolve(event.status);
      }),
    );
    await removeDir(join(dir, 'b'));
    expect((await removed).name).toBe('tool_b');

    expect(host.list().map((tool) => tool.name)).toEqual(['tool_a']);
    const outcome = await host.call('tool_b', {});
    expect(outcome.error?.code).toBe('UNKNOWN_TOOL');
    expect(outcomeText(await host.call('tool_a', {}))).toBe('a');
  });

  it('leaves out a package that turns hostile on update while the others stay offered', async () => {
    const dir = await packagesDir();
    await writePackage(join(dir, 'good'), { 'good.js': toolSource('good', "'still good'") });
    await writePackage(join(dir, 'turncoat'), { 'turn.js': toolSource('turncoat', "'fine for now'") });
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });
    expect(host.list()).toHaveLength(2);

    await writeFile(
      join(dir, 'turncoat', 'tools', 'turn.js'),
      `process.exit(9);\n${toolSource('turncoat', "'x'")}`,
    );
    await whenStatus(host, (statuses) =>
      statuses.some(
        (s) => s.path.endsWith('turn.js') && s.state === 'left-out' && s.code === 'DECLARATION_EXITED',
      ),
    );

    expect(host.list().map((tool) => tool.name)).toEqual(['good']);
    expect(outcomeText(await host.call('good', {}))).toBe('still good');
    expect((await host.call('turncoat', {})).error?.code).toBe('UNKNOWN_TOOL');
  });

  it('reads a package caught half-written once it is complete, and never crashes on the way', async () => {
    const dir = await packagesDir();
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });
    const pkg = join(dir, 'installing');
    await mkdir(join(pkg, 'tools'), { recursive: true });
    // The manifest lands first, listing a module that isn't there yet; then half the module.
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ type: 'module', toolhost: { tools: ['./tools/late.js'] } }),
    );
    await writeFile(join(pkg, 'tools', 'late.js'), 'export const name = "late";\nexport const descr');
    await handle.refresh();
    expect(host.list()).toEqual([]);
    expect(host.status().find((s) => s.path.endsWith('late.js'))?.state).toBe('left-out');

    await writeFile(join(pkg, 'tools', 'late.js'), toolSource('late', "'complete'"));
    await whenStatus(host, (statuses) => offered(statuses, 'late'));
    expect(outcomeText(await host.call('late', {}))).toBe('complete');
  });

  it('shows a folder that is not a package as left out instead of failing', async () => {
    const dir = await packagesDir();
    await mkdir(join(dir, 'not-a-package'));
    await writePackage(join(dir, 'ok'), { 'ok.js': toolSource('ok', "'ok'") });
    handle = await host.watch(dir, { debounceMs: 30, stableMs: 20 });

    const problem = host.status().find((s) => s.path.endsWith('not-a-package'));
    expect(problem).toMatchObject({ state: 'left-out', code: 'SOURCE_UNREADABLE' });
    expect(problem?.reason).toMatch(/has no package\.json/);
    expect(host.list().map((tool) => tool.name)).toEqual(['ok']);
  });

  it('rejects watching a folder that does not exist', async () => {
    await expect(host.watch(join(root, 'nowhere'))).rejects.toMatchObject({ code: 'PATH_NOT_FOUND' });
  });
});

describe('a source given as a function', () => {
  it('loads what the function yields now and unloads what it stops yielding on refresh', async () => {
    const a = await writePackage(join(root, 'a'), { 'a.js': toolSource('from_a', "'a'") });
    const b = await writePackage(join(root, 'b'), { 'b.js': toolSource('from_b', "'b'") });
    let current = [a];
    handle = await host.addSource(() => current);
    expect(host.list().map((tool) => tool.name)).toEqual(['from_a']);

    current = [b];
    const report = await handle.refresh();
    expect(report.unloaded).toEqual([a]);
    expect(report.loaded).toEqual([b]);
    expect(host.list().map((tool) => tool.name)).toEqual(['from_b']);

    await handle.close();
    handle = undefined;
    expect(host.list()).toEqual([]);
  });

  it('reports a path that cannot be loaded as failed and left out', async () => {
    handle = await host.addSource([join(root, 'missing-package')]);
    const report = await handle.refresh();
    expect(report.failed).toEqual([
      {
        path: join(root, 'missing-package'),
        reason: `No such file or directory: ${join(root, 'missing-package')}`,
      },
    ]);
    expect(host.status()).toMatchObject([{ state: 'left-out', code: 'SOURCE_UNREADABLE' }]);
  });
});

/**
 * These hosts' one time bound serves both reads: the one that must run over it and the one that must
 * finish inside it. The bound counts from the reader worker's start, and starting a worker on a loaded
 * 2-core machine (more so on Node 22 and later) can take most of a 300 ms bound by itself: a read that
 * should finish must have room to spare, whatever the load.
 */
const READ_TIMEOUT_MS = 2_000;

describe('the re-read schedule', () => {
  const slowName = `export const name = () => { for (;;) {} };
export const description = 'never finishes naming itself';
export const parameterSchema = { type: 'object' };
export function run() { return 'ran'; }
`;

  it('is visible in status, and a module that changes cancels it and is read again', async () => {
    const clock = new FakeClock();
    const local = new ToolHost({
      isolation: 'worker',
      dataDir: join(root, '.data2'),
      clock,
      readTimeoutMs: READ_TIMEOUT_MS,
      logger: recordingLogger(),
    });
    try {
      const pkg = await writePackage(join(root, 'slow'), { 'slow.js': slowName });
      await local.load(pkg);
      await clock.untilPending(1);
      const [status] = local.status();
      expect(status).toMatchObject({ state: 'reread-pending', code: 'DECLARATION_TIMEOUT' });
      expect(status?.nextRereadAt).toBe(clock.now() + 60_000);

      await writeFile(join(pkg, 'tools', 'slow.js'), toolSource('fixed', "'fixed'"));
      await local.load(pkg);
      expect(clock.pendingSleeps).toEqual([]);
      expect(local.list().map((tool) => tool.name)).toEqual(['fixed']);
    } finally {
      await local.close();
    }
  });

  it('offers the tool when a re-read finally finishes, and reports it as a re-read result', async () => {
    const clock = new FakeClock();
    // Re-reads enough that one running over now and then (a busy machine) still ends in a result.
    const rereadDelaysMs = Array.from({ length: 5 }, () => 60_000);
    const local = new ToolHost({
      isolation: 'worker',
      dataDir: join(root, '.data5'),
      clock,
      readTimeoutMs: READ_TIMEOUT_MS,
      rereadDelaysMs,
      logger: recordingLogger(),
    });
    try {
      // Busy while the marker file exists (a machine under load), quick once it is gone.
      const busy = join(root, 'busy');
      await writeFile(busy, '');
      const source = `import { existsSync } from 'node:fs';
export const name = () => { while (existsSync(${JSON.stringify(busy)})) {} return 'patient'; };
export const description = 'named once the machine is quiet';
export const parameterSchema = { type: 'object' };
export function run() { return 'worth the wait'; }
`;
      const pkg = await writePackage(join(root, 'patient'), { 'patient.js': source });
      await local.load(pkg);
      await clock.untilPending(1);
      expect(local.list()).toEqual([]);

      await removeDir(busy);
      // Each re-read ends in a result or, if it ran over again, in the next schedule: never waits
      // on an event that may not come.
      let outcome: ModuleEvent | undefined;
      for (
        let attempt = 1;
        attempt <= rereadDelaysMs.length && (outcome === undefined || outcome.type === 'reread-pending');
        attempt++
      ) {
        const next = new Promise<ModuleEvent>((resolve) => {
          const listener = (event: ModuleEvent) => {
            if (!event.reread) return;
            local.off('module', listener);
            resolve(event);
          };
          local.on('module', listener);
        });
        clock.advance(60_000);
        outcome = await next;
      }
      expect(outcome).toMatchObject({
        type: 'offered',
        reread: true,
        status: { name: 'patient', state: 'offered' },
      });
      expect(outcomeText(await local.call('patient', {}))).toBe('worth the wait');
      expect(clock.pendingSleeps).toEqual([]);
    } finally {
      await local.close();
    }
  });

  it('is cancelled when the host closes', async () => {
    const clock = new FakeClock();
    const local = new ToolHost({
      isolation: 'worker',
      dataDir: join(root, '.data3'),
      clock,
      readTimeoutMs: READ_TIMEOUT_MS,
      logger: recordingLogger(),
    });
    await local.load(await writePackage(join(root, 'slow'), { 'slow.js': slowName }));
    await clock.untilPending(1);
    await local.close();
    expect(clock.pendingSleeps).toEqual([]);
  });
});

describe('closing', () => {
  it('leaves nothing running: a process that watched a folder and called tools exits by itself', async () => {
    const dir = await packagesDir();
    await writePackage(join(dir, 'p'), { 'p.js': toolSource('p', "'p'") });
    const index = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));
    const script = `
      import { ToolHost } from ${JSON.stringify(index)};
      const host = new ToolHost({ isolation: 'worker', dataDir: ${JSON.stringify(join(root, '.data4'))} });
      await host.watch(${JSON.stringify(dir)}, { debounceMs: 30 });
      const outcome = await host.call('p', {});
      await host.close();
      console.log(JSON.stringify(outcome.content));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 30_000,
    });
    expect(JSON.parse(stdout)).toEqual([{ type: 'text', text: 'p' }]);
    expect(existsSync(join(root, '.data4'))).toBe(false);
  });
});
