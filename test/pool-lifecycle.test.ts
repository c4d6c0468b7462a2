import { existsSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, writePackage } from './support/tool-packages.js';

// One package with a tool that hangs, one that answers at once, one that waits for a flag file,
// and one that reports its tmpDir and then exhausts its heap.
const hang = `export const name = 'hang';
export const description = 'never returns';
export const parameterSchema = { type: 'object' };
export function run() { for (;;) {} }
`;
const quick = `export const name = 'quick';
export const description = 'answers at once';
export const parameterSchema = { type: 'object' };
export function run() { return 'quick'; }
`;
const waitFor = (flag: string) => `import { existsSync } from 'node:fs';
export const name = 'wait_for_flag';
export const description = 'answers once the test creates its flag file';
export const parameterSchema = { type: 'object' };
export async function run() {
  while (!existsSync(${JSON.stringify(flag)})) await new Promise((r) => setTimeout(r, 5));
  return 'flag seen';
}
`;
const tmpThenOom = `export const name = 'tmp_then_oom';
export const description = 'uses its tmpDir, then exhausts the heap';
export const parameterSchema = { type: 'object' };
export function run(args, ctx) {
  ctx.emit(ctx.tmpDir);
  const hoard = [];
  for (;;) hoard.push(new Array(1_000_000).fill(1));
}
`;

let root: string;
let pkg: string;
let flag: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-pool-');
  flag = join(root, 'flag');
  pkg = await writePackage(join(root, 'pkg'), {
    'hang.js': hang,
    'quick.js': quick,
    'wait.js': waitFor(flag),
    'oom.js': tmpThenOom,
  });
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

function makeHost(maxThreadsPerPool: number): ToolHost {
  host = new ToolHost({
    isolation: 'worker',
    dataDir: join(root, 'data'),
    maxThreadsPerPool,
    timeoutGraceMs: 20,
    logger: recordingLogger(),
  });
  return host;
}

describe('calls queued behind a worker that ends', () => {
  it('a call queued behind a timed-out call on the only thread still runs, and the next call too', async () => {
    makeHost(1);
    await host.load(pkg);
    const stuck = host.call('hang', {}, { timeoutMs: 300 });
    const queued = host.call('quick', {});

    expect((await stuck).error?.code).toBe('TOOL_TIMEOUT');
    expect(outcomeText(await queued)).toBe('quick');
    expect(outcomeText(await host.call('quick', {}))).toBe('quick');
  });

  it('with two threads, a call queued behind a killed worker runs while the other thread stays busy', async () => {
    makeHost(2);
    await host.load(pkg);
    // One thread waits for the flag, which is only created once the queued call has answered: if
    // the queued call waited for that thread instead of a replacement, this test would never end.
    const busy = host.call('wait_for_flag', {});
    const stuck = host.call('hang', {}, { timeoutMs: 300 });
    const queued = host.call('quick', {});

    expect((await stuck).error?.code).toBe('TOOL_TIMEOUT');
    expect(outcomeText(await queued)).toBe('quick');
    await writeFile(flag, '');
    expect(outcomeText(await busy)).toBe('flag seen');
  });

  it('a call queued in a pool that is draining (its package changed) still answers', async () => {
    makeHost(1);
    await host.load(pkg);
    const stuck = host.call('hang', {}, { timeoutMs: 300 });
    const queued = host.call('quick', {});
    await appendFile(join(pkg, 'tools', 'quick.js'), '\n// a new version\n');
    await host.load(pkg);

    expect((await stuck).error?.code).toBe('TOOL_TIMEOUT');
    expect(outcomeText(await queued)).toBe('quick');
    expect(outcomeText(await host.call('quick', {}))).toBe('quick');
  });

  it('close() answers a call still running in a draining pool with HOST_CLOSED', async () => {
    makeHost(1);
    await host.load(pkg);
    const running = host.call('wait_for_flag', {});
    const started = host.call('quick', {});
    await appendFile(join(pkg, 'tools', 'quick.js'), '\n// a new version\n');
    await host.load(pkg);
    await host.close();

    expect((await running).error?.code).toBe('HOST_CLOSED');
    expect((await started).error?.code).toBe('HOST_CLOSED');
  });
});

describe('the tmpDir of a worker that ran out of memory', () => {
  it('is removed by the host, and the next call works', async () => {
    makeHost(1);
    await host.load(pkg);
    const tmpDirs: string[] = [];
    host.on('progress', (event) => tmpDirs.push(String(event.data)));

    const outcome = await host.call('tmp_then_oom', {});

    expect(outcome.error?.code).toBe('TOOL_OUT_OF_MEMORY');
    expect(tmpDirs).toHaveLength(1);
    await vi.waitFor(() => expect(existsSync(tmpDirs[0] as string)).toBe(false), { timeout: 10_000 });
    expect(outcomeText(await host.call('quick', {}))).toBe('quick');
  });
});
