/**
 * What the worker-boundary suites share: the hostile fixtures under fixtures/boundary, both isolation
 * tiers, and a host run in a child process of its own (to read its real stdout and stderr, and to see
 * that it exits by itself).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolHostOptions, ToolOutcome } from '../../dist/src/index.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const TIERS = ['worker', 'strict'] as const;

/** A hostile fixture under fixtures/boundary. */
export function boundaryFixture(file: string): string {
  return join(repoRoot, 'fixtures', 'boundary', file);
}

export interface ChildHostConfig {
  load: string[];
  options: ToolHostOptions;
  calls: Array<{ tool: string; args: unknown }>;
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
}

/**
 * Runs a host in a child process (test/support/hosts/run-calls.mjs), which loads, calls, closes and
 * then has to exit by itself; resolves when it has exited and its streams are closed.
 */
export function runHostInChild(config: ChildHostConfig): Promise<ChildHostRun> {
  const script = fileURLToPath(new URL('./hosts/run-calls.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, JSON.stringify(config)], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const collected = { stdout: '', stderr: '', report: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    collected.stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    collected.stderr += chunk.toString();
  });
  child.stdio[3]?.on('data', (chunk: Buffer) => {
    collected.report += chunk.toString();
  });
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      resolve({
        code,
        signal,
        stdout: collected.stdout,
        stderr: collected.stderr,
        report: collected.report === '' ? undefined : (JSON.parse(collected.report) as ChildHostReport),
      });
    });
  });
}
