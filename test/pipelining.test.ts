import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { nextEvent, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, writePackage } from './support/tool-packages.js';

// Calls a pool posts to a worker behind the call it runs, when every worker is busy. Each tool
// answers with its worker's thread id, so a test sees which calls shared a worker.
const header = (name: string) => `import { existsSync, writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
export const name = ${JSON.stringify(name)};
export const description = 'a pipelining fixture';
export const parameterSchema = { type: 'object', properties: { file: { type: 'string' } } };
`;
const tools = {
  // Says it started (progress), then waits, awaiting timers, until the test creates its file.
  'wait.js': `${header('wait_for_file')}export async function run({ file }, ctx) {
  ctx.emit('started');
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 5));
  return String(threadId);
}
`,
  // Busy in one synchronous stretch until the test creates its file.
  'spin.js': `${header('spin_until_file')}export function run({ file }) {
  while (!existsSync(file));
  return String(threadId);
}
`,
  // Leaves a mark when it runs.
  'mark.js': `${header('mark')}export function run({ file }) {
  writeFileSync(file, 'ran');
  return String(threadId);
}
`,
  // Leaves a mark, then waits for the file `${'$'}{file}.go`.
  'mark-wait.js': `${header('mark_then_wait')}export async function run({ file }) {
  writeFileSync(file, 'ran');
  while (!existsSync(file + '.go')) await new Promise((r) => setTimeout(r, 5));
  return String(threadId);
}
`,
  'exit.js': `${header('exit_worker')}export function run() { process.exit(3); }
`,
  // What a tool finds of the claims' memory the host shares with its worker.
  'peek.js': `${header('peek_claims')}import { workerData } from 'node:worker_threads';
export function run() { return String(workerData.claims); }
`,
};

let root: string;
let pkg: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-pipeline-');
  pkg = await writePackage(join(root, 'pkg'), tools);
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

async function hostWith(maxThreadsPerPool: number): Promise<ToolHost> {
  host = new ToolHost({
    isolation: 'worker',
    dataDir: join(root, 'data'),
    maxThreadsPerPool,
    timeoutGraceMs: 20,
    logger: recordingLogger(),
  });
  await host.load(pkg);
  return host;
}

const file = (name: string) => join(root, name);

/** Starts a call that waits for the file `name`; `started` resolves once its tool runs. */
function waiting(callId: string, name: string) {
  const started = nextEvent(host, 'progress', (event) => event.callId === callId);
  return { call: host.call('wait_for_file', { file: file(name) }, { callId }), started };
}

/** Blocks this thread until `path` exists: nothing of this host's can run meanwhile. */
function blockUntilExists(path: string): boolean {
  const until = Date.now() + 60_000;
  while (!existsSync(path)) if (Date.now() > until) return false;
  return true;
}

describe('a call posted to a busy worker', () => {
  it('starts there when the call ahead replies, without the host: its thread may be busy', async () => {
    await hostWith(1);
    // Both reach the pool before its one worker has started: it takes the first, then the second.
    const { call: ahead, started } = waiting('ahead', 'go');
    const queued = host.call('mark', { file: file('mark') });
    await started;
    // This thread is held while the worker goes on alone.
    await writeFile(file('go'), '');
    expect(blockUntilExists(file('mark'))).toBe(true);
    const [first, second] = await Promise.all([ahead, queued]);
    expect(first.isError).toBe(false);
    expect(outcomeText(second)).toBe(outcomeText(first));
  });

  it("the call ahead's reply is not held up by the next call's tool", async () => {
    await hostWith(1);
    const { call: ahead, started } = waiting('ahead', 'go');
    const queued = host.call('spin_until_file', { file: file('stop') });
    await started;
    await writeFile(file('go'), '');
    // The next tool spins until the test has the first answer.
    const first = await ahead;
    expect(first.isError).toBe(false);
    await writeFile(file('stop'), '');
    expect(outcomeText(await queued)).toBe(outcomeText(first));
  });

  for (const freed of ['first', 'second'] as const) {
    it(`moves to a worker that falls idle first (the ${freed} of two busy ones)`, async () => {
      await hostWith(2);
      const { call: one, started: oneStarted } = waiting('one', 'one');
      await oneStarted;
      const { call: two, started: twoStarted } = waiting('two', 'two');
      await twoStarted;
      const queued = host.call('mark', { file: file('mark') });
      await writeFile(file(freed === 'first' ? 'one' : 'two'), '');
      const [released, moved] = await Promise.all([freed === 'first' ? one : two, queued]);
      expect(outcomeText(moved)).toBe(outcomeText(released));
      // The other call still waits: the queued call did not wait for it.
      await writeFile(file(freed === 'first' ? 'two' : 'one'), '');
      expect((await (freed === 'first' ? two : one)).isError).toBe(false);
    });
  }

  it("aborted before it starts, it answers CALL_ABORTED, never runs, and the call ahead's worker goes on", async () => {
    await hostWith(1);
    const { call: ahead, started } = waiting('ahead', 'go');
    const abort = new AbortController();
    const queued = host.call('mark', { file: file('mark') }, { signal: abort.signal });
    await started;
    abort.abort();
    expect((await queued).error?.code).toBe('CALL_ABORTED');
    await writeFile(file('go'), '');
    const first = await ahead;
    expect(first.isError).toBe(false);
    // The worker skipped the aborted task before it took this one.
    const next = await host.call('mark', { file: file('next') });
    expect(outcomeText(next)).toBe(outcomeText(first));
    expect(existsSync(file('mark'))).toBe(false);
  });

  it('is claimed through memory no tool can reach', async () => {
    await hostWith(1);
    expect(outcomeText(await host.call('peek_claims', {}))).toBe('undefined');
  });

  it('runs on a new worker when the call ahead ends its worker', async () => {
    await hostWith(1);
    const ahead = host.call('exit_worker', {});
    const queued = host.call('mark', { file: file('mark') });
    expect((await ahead).error?.code).toBe('TOOL_EXITED');
    const after = await queued;
    expect(after.isError).toBe(false);
    expect(existsSync(file('mark'))).toBe(true);
  });

  it("the call ahead's reply counts when the call behind it is aborted after it started", async () => {
    await hostWith(1);
    const { call: ahead, started } = waiting('ahead', 'go');
    const abort = new AbortController();
    const queued = host.call('mark_then_wait', { file: file('mark') }, { signal: abort.signal });
    await started;
    // With this thread held, the worker replies for the call ahead and starts the next one: the
    // host has not read that reply when the abort ends the worker.
    await writeFile(file('go'), '');
    expect(blockUntilExists(file('mark'))).toBe(true);
    abort.abort();
    const [first, second] = await Promise.all([ahead, queued]);
    expect(first.isError).toBe(false);
    expect(second.error?.code).toBe('CALL_ABORTED');
    expect((await host.call('mark', { file: file('next') })).isError).toBe(false);
  });

  it('moves to the place of a worker ended while it waited behind a long call', async () => {
    await hostWith(2);
    const { call: long, started: longStarted } = waiting('long', 'long');
    await longStarted;
    const stuckStarted = nextEvent(host, 'progress', (event) => event.callId === 'stuck');
    const stuck = host.call('wait_for_file', { file: file('never') }, { callId: 'stuck', timeoutMs: 200 });
    await stuckStarted;
    const queued = host.call('mark', { file: file('mark') });
    // The second call times out and its worker is ended, while the long one still runs: the queued
    // call answers before the long one is let go.
    expect((await stuck).error?.code).toBe('TOOL_TIMEOUT');
    expect((await queued).isError).toBe(false);
    await writeFile(file('long'), '');
    expect((await long).isError).toBe(false);
  });
});
