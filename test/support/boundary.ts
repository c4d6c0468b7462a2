/**
 * What the worker-boundary suites share: the hostile fixtures under fixtures/boundary, both isolation
 * tiers, and a host run in a child process of its own (to read its real stdout and stderr, and to see
 * that it exits by itself).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { ToolHostOptions, ToolOutcome } from '../../dist/src/index.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const TIERS = ['worker', 'strict'] as const;

/** Every isolation tier: the worker-boundary tiers and the process tier, which answers the same way. */
export const ALL_TIERS = ['worker', 'strict', 'process'] as const;

/** A hostile fixture under fixtures/boundary. */
export function boundaryFixture(file: string): string {
  return join(repoRoot, 'fixtures', 'boundary', file);
}

/**
 * A logger's lines without the strict tier's once-per-host notice of what it can't contain on this
 * Node (the network before Node 25): the suites here assert what else was logged.
 */
export function withoutTierNotice<T extends { message: string }>(lines: readonly T[]): T[] {
  return lines.filter((line) => !line.message.startsWith('strict isolation on'));
}

/**
 * A left-out reason as the host writes it for a module of fixtures/boundary: where (the module's file,
 * with a line and column when something says where) and then `reason`.
 */
export function locatedReason(file: string, reason: string): unknown {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^${literal(file)}(:\\d+:\\d+)?: ${literal(reason)}$`, 's'));
}

export interface ChildHostConfig {
  load: string[];
  options: ToolHostOptions;
  calls: Array<{ tool: string; args: unknown }>;
  /** Run the calls all at once rather than one after another. */
  concurrent?: boolean;
  /** Node flags for the child (e.g. a small heap). */
  execArgv?: string[];
}

export interface ChildHostReport {
  loaded: string[];
  outcomes: ToolOutcome[];
  /** What the 'output' event carried, per call. */
  outputs: string[];
  /** What reached the host's logger. */
  lines: string[];
  closed: boolean;
}

export interface ChildHostRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The child's real stdout and stderr: only what got past toolhost. */
  stdout: string;
  stderr: string;
  /** Undefined when the child ended before reporting. */
  report: ChildHostReport | undefined;
  /** With `concurrent`, the tools in the order their calls answered. */
  answered: string[];
}

/**
 * Runs a host in a child process (test/support/hosts/run-calls.mjs), which loads, calls, closes and
 * then has to exit by itself; resolves when it has exited and its streams are closed. `onAnswered`
 * hears each concurrent call as it answers; aborting `signal` kills the child.
 */
export function runHostInChild(
  config: ChildHostConfig,
  hooks: { onAnswered?: (tool: string) => void; signal?: AbortSignal } = {},
): Promise<ChildHostRun> {
  const script = fileURLToPath(new URL('./hosts/run-calls.mjs', import.meta.url));
  const child = spawn(process.execPath, [...(config.execArgv ?? []), script, JSON.stringify(config)], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    ...(hooks.signal === undefined ? {} : { signal: hooks.signal, killSignal: 'SIGKILL' as const }),
  });
  child.on('error', () => {
    // Killed through the signal: 'close' still follows.
  });
  const answered: string[] = [];
  const collected = { stdout: '', stderr: '', report: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    collected.stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    collected.stderr += chunk.toString();
  });
  let pending = '';
  child.stdio[3]?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const parsed = JSON.parse(line) as { answered?: string };
      if (parsed.answered === undefined) {
        collected.report = line;
      } else {
        answered.push(parsed.answered);
        hooks.onAnswered?.(parsed.answered);
      }
    }
  });
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      resolve({
        code,
        signal,
        stdout: collected.stdout,
        stderr: collected.stderr,
        report: collected.report === '' ? undefined : (JSON.parse(collected.report) as ChildHostReport),
        answered,
      });
    });
  });
}
