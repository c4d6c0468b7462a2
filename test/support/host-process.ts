/**
 * Runs a host in a process of its own (test/support/process-host.mjs), for tests that watch how
 * that process ends and what it writes: resolves once it has exited and its output is read.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HOST_SCRIPT = fileURLToPath(new URL('./process-host.mjs', import.meta.url));

/** What process-host.mjs takes: host options, packages to load, calls to make in turn. */
export interface HostPlan {
  options: Record<string, unknown>;
  packages: string[];
  calls: Array<{ name: string; args: unknown; options?: Record<string, unknown> }>;
  /** The host process's environment (its own, unless given). */
  env?: Record<string, string>;
  /** Writes `STATUS <host.status() JSON>` once the packages are loaded. */
  statusAfterLoad?: boolean;
}

export interface HostProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export async function runHostProcess(plan: HostPlan): Promise<HostProcessRun> {
  const child = spawn(process.execPath, [HOST_SCRIPT, JSON.stringify(plan)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(plan.env === undefined ? {} : { env: plan.env }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  return { code, signal, stdout, stderr };
}
