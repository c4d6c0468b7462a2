/**
 * `close()` never waits for a declaration read: with a read bound of ten minutes, a close during a
 * read that would use all of it resolves at once (the suite's own timeout is a minute: a close that
 * waited for the read could not pass), the source's refresh ends with it, and the process exits
 * by itself. A load still under way when the host closed, which asks for its process-tier reads
 * after the close, starts nothing.
 */
import { execFile } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DomainPools } from '../dist/src/calls/domain-pools.js';
import { WorkerFlags } from '../dist/src/calls/worker-flags.js';
import { CLOSED_OUTCOME } from '../dist/src/declaration/read-worker.js';
import { resolveSettings } from '../dist/src/host/settings.js';
import { ToolHost, type WorkerBudgetEvent } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

const READ_BOUND_MS = 600_000;

let root: string;

beforeEach(async () => {
  root = await tempDir('toolhost-close-reads-');
});

afterEach(async () => {
  await removeDir(root);
});

/** A package whose module says it is being read (a marker file), then never finishes loading. */
async function endlessRead(marker: string): Promise<string> {
  return writePackage(join(root, 'endless'), {
    'endless.js': `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(marker)}, '');
for (;;) {}
${toolSource('endless', "'never'")}`,
  });
}

/** Resolves once `path` exists (a file-system event, not a poll). */
function whenExists(path: string, folder: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(folder, () => {
      if (existsSync(path)) {
        watcher.close();
        resolve();
      }
    });
    if (existsSync(path)) {
      watcher.close();
      resolve();
    }
  });
}

describe('close() during a slow declaration read', () => {
  it('resolves long before the read bound, ends the read without blaming the module, and the refresh with it', async () => {
    const marker = join(root, 'reading');
    const pkg = await endlessRead(marker);
    const host = new ToolHost({
      isolation: 'worker',
      dataDir: join(root, 'data'),
      readTimeoutMs: READ_BOUND_MS,
      logger: recordingLogger(),
    });
    const reports: unknown[] = [];
    const reading = whenExists(marker, root);
    const adding = host.addSource([pkg]);
    const loading = host.load(pkg).then((report) => reports.push(report));
    await reading;

    await host.close();

    // Resolving at all is the proof: the read alone would have run for ten minutes.
    const handle = await adding;
    await loading;
    expect(reports).toMatchObject([
      {
        modules: [
          {
            state: 'left-out',
            code: 'DECLARATION_EXITED',
            reason: 'the tool host closed before the declaration was read',
          },
        ],
      },
    ]);
    expect(await handle.refresh()).toEqual({ loaded: [], unloaded: [], failed: [] });
    expect(host.list()).toEqual([]);
  });

  it('leaves nothing running: the process exits by itself right after close', async () => {
    const marker = join(root, 'reading');
    const pkg = await endlessRead(marker);
    const index = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));
    const script = join(root, 'close-during-read.mjs');
    await writeFile(
      script,
      `import { existsSync, watch } from 'node:fs';
import { ToolHost } from ${JSON.stringify(index)};
const host = new ToolHost({ isolation: 'worker', dataDir: ${JSON.stringify(join(root, 'data'))}, readTimeoutMs: ${READ_BOUND_MS}, logger: { info() {}, warn() {}, error() {} } });
const reading = new Promise((resolve) => {
  const watcher = watch(${JSON.stringify(root)}, () => existsSync(${JSON.stringify(marker)}) && (watcher.close(), resolve()));
});
const adding = host.addSource([${JSON.stringify(pkg)}]);
await reading;
await host.close();
await adding;
console.log(JSON.stringify(host.status()));
`,
    );
    // No process.exit in the script: it ends only if close() left nothing running. The timeout
    // only bounds a failure (it is far below the read bound).
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 45_000 });
    expect(JSON.parse(stdout)).toEqual([]);
  });
});

const { sandbox } = await processEnvironment();

describe("close() during a process-tier package's first load", () => {
  // The tier's modules load on a host's first process-tier package, and the tier starts a spare
  // process once they are there. A close before, while and after they load (here: after 0 to 300
  // turns of the event loop, one fresh host each) must end whatever the tier started.
  it('leaves no process running, whenever it comes: the process exits by itself', async ({ skip }) => {
    skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
    const pkg = await writePackage(join(root, 'tools'), { 'echo.js': toolSource('echo', "'echoed'") });
    const index = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));
    const script = join(root, 'close-during-tier-load.mjs');
    await writeFile(
      script,
      `import { ToolHost } from ${JSON.stringify(index)};
const results = [];
for (const turns of [0, 1, 10, 30, 100, 300]) {
  const host = new ToolHost({ isolation: 'process', dataDir: ${JSON.stringify(join(root, 'data'))}, logger: { info() {}, warn() {}, error() {} } });
  let closed = false;
  const startedAfterClose = [];
  host.on('workers', (event) => { if (closed && event.type === 'started') startedAfterClose.push(event.source); });
  const loading = host.load(${JSON.stringify(pkg)}).then((report) => report.modules.map((module) => module.state), (error) => error.code);
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
  await host.close();
  closed = true;
  results.push({ load: await loading, tools: host.list().length, startedAfterClose });
}
console.log(JSON.stringify(results));
`,
    );
    // No process.exit in the script: it ends only if every close() left nothing running.
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 60_000 });
    const results = JSON.parse(stdout) as Array<{
      load: unknown;
      tools: number;
      startedAfterClose: string[];
    }>;
    expect(results).toHaveLength(6);
    for (const { load, tools, startedAfterClose } of results) {
      expect(tools).toBe(0);
      expect(startedAfterClose).toEqual([]);
      // Cut short, or read before the close: never a rejection for the caller's load.
      expect(Array.isArray(load)).toBe(true);
    }
  });
});

describe('a process-tier read asked for after close() (a load under way when the host closed)', () => {
  it('answers as a read the close cut short, and starts no process, no spare and no tier', async () => {
    const settings = resolveSettings({ dataDir: join(root, 'data'), logger: recordingLogger() });
    const events: WorkerBudgetEvent[] = [];
    const pools = new DomainPools(
      settings,
      new WorkerFlags(settings),
      () => {},
      undefined,
      (event) => events.push(event),
    );
    await pools.close();
    const pkg = await writePackage(join(root, 'late'), { 'echo.js': toolSource('echo', "'echoed'") });
    const version = {
      root: pkg,
      isolation: 'process' as const,
      snapshot: undefined,
      packageName: 'late',
      permissions: { net: false as const },
    };

    const reads = await pools.readsFor(version);
    expect(reads).toBeDefined();
    expect(await reads?.read(`file://${join(pkg, 'echo.js')}`)).toStrictEqual(CLOSED_OUTCOME);
    reads?.close();
    expect(events).toStrictEqual([]);
  });
});
