/**
 * Generations under churn: a package is swapped forty times while a caller lists and calls in a
 * tight loop (every swap is one more read racing the same calls: forty show what 120 did, in a third
 * of the time), and the other package changes now and then. Every tick sees both tools, every call answers the version its own tick
 * listed (module and the file it imports alike), nothing answers an error, nothing rejects.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolSourceHandle } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const SWAPS = 40;

let root: string;
let host: ToolHost;
let source: ToolSourceHandle | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-generations-');
  host = new ToolHost({
    isolation: 'worker',
    dataDir: join(root, '.data'),
    logger: recordingLogger(),
    maxThreadsPerPool: 2,
  });
});

afterEach(async () => {
  await source?.close();
  source = undefined;
  await host.close();
  await removeDir(root);
});

/** Writes a file the way installers do: elsewhere, then renamed into place in one step. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const staging = `${path}.staging`;
  await writeFile(staging, text);
  await rename(staging, path);
}

/**
 * Version `n` of a package: its tool names the version in its description, imports a file written
 * for that version only, and answers both. A call that ran any other bytes answers something else.
 */
async function writeVersion(pkg: string, tool: string, n: number): Promise<void> {
  await mkdir(join(pkg, 'tools'), { recursive: true });
  await mkdir(join(pkg, 'lib'), { recursive: true });
  await writeAtomically(
    join(pkg, 'package.json'),
    JSON.stringify({ name: tool, type: 'module', toolhost: { tools: [`./tools/${tool}.js`] } }),
  );
  await writeAtomically(join(pkg, 'lib', `part-${n}.js`), `export const part = ${n};\n`);
  await writeAtomically(
    join(pkg, 'tools', `${tool}.js`),
    `import { part } from '../lib/part-${n}.js';
export const name = ${JSON.stringify(tool)};
export const description = 'version ${n}';
export const parameterSchema = { type: 'object' };
export function run() { return JSON.stringify({ version: ${n}, part }); }
`,
  );
}

const versionOf = (description: string | undefined) => Number(description?.replace('version ', ''));

describe('a package swapped over and over while a caller lists and calls', () => {
  it(`never loses a tool, never answers another version than its tick listed, never errs (${SWAPS} swaps)`, async () => {
    const swapping = join(root, 'swapping');
    const steady = join(root, 'steady');
    await writeVersion(swapping, 'swap', 1);
    await writeVersion(steady, 'steady', 1);
    source = await host.addSource(() => [swapping, steady]);

    // Every generation published, as it is published, holds both tools.
    const publishedWithout: string[] = [];
    host.on('module', () => {
      const names = host.list().map((tool) => tool.name);
      if (!names.includes('swap') || !names.includes('steady')) publishedWithout.push(names.join(','));
    });

    const missing: string[] = [];
    const mismatched: unknown[] = [];
    const errors: unknown[] = [];
    const rejected: unknown[] = [];
    const answered = new Set<number>();
    let ticks = 0;
    let done = false;
    // The swapper waits, before each swap, until a call listing the current version has started:
    // that call's worker starts while the next version is being written to disk and read.
    let started = 0;
    let wake: (() => void) | undefined;
    const startedOn = async (version: number) => {
      while (started < version) await new Promise<void>((resolve) => (wake = resolve));
    };

    const caller = (async () => {
      while (!done) {
        // One tick: what is listed and what is called come from the same generation.
        const listed = host.list();
        const swap = listed.find((tool) => tool.name === 'swap');
        const other = listed.find((tool) => tool.name === 'steady');
        if (swap === undefined || other === undefined) {
          missing.push(listed.map((tool) => tool.name).join(','));
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        const version = versionOf(swap.description);
        const steadyVersion = versionOf(other.description);
        const calls = [host.call('swap', {}), host.call('steady', {})];
        started = Math.max(started, version);
        wake?.();
        try {
          const [swapOutcome, steadyOutcome] = await Promise.all(calls);
          for (const [outcome, expected] of [
            [swapOutcome, version],
            [steadyOutcome, steadyVersion],
          ] as const) {
            if (outcome === undefined || outcome.isError) {
              errors.push(outcome);
              continue;
            }
            const answer = JSON.parse(outcomeText(outcome)) as { version: number; part: number };
            if (answer.version !== expected || answer.part !== expected)
              mismatched.push({ expected, answer });
          }
          answered.add(version);
        } catch (error) {
          rejected.push(error);
        }
        ticks += 1;
      }
    })();

    for (let n = 2; n <= SWAPS + 1; n++) {
      await startedOn(n - 1);
      await writeVersion(swapping, 'swap', n);
      // Now and then the other package changes too: its publish must not carry a half-read swap.
      if (n % 7 === 0) await writeVersion(steady, 'steady', n);
      const report = await source.refresh();
      expect(report.failed).toEqual([]);
    }
    await startedOn(SWAPS + 1);
    done = true;
    await caller;

    expect(publishedWithout).toEqual([]);
    expect(missing).toEqual([]);
    expect(mismatched).toEqual([]);
    expect(errors).toEqual([]);
    expect(rejected).toEqual([]);
    // Every version was called and verified, and the caller kept going during the reads.
    expect(answered.size).toBe(SWAPS + 1);
    expect(ticks).toBeGreaterThanOrEqual(SWAPS + 1);
    expect(versionOf(host.list().find((tool) => tool.name === 'swap')?.description)).toBe(SWAPS + 1);
  }, 600_000);
});
