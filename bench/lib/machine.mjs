/** What the numbers were measured on: the machine, the runtime and the code. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, freemem, loadavg, release, totalmem, type } from 'node:os';

function git(args) {
  try {
    return execFileSync('git', args, { cwd: new URL('../..', import.meta.url), encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function packageVersion(name) {
  try {
    const url = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return undefined;
  }
}

export function describeMachine() {
  const changed = git(['status', '--porcelain', '--', 'src', 'workers']);
  return {
    node: process.version,
    v8: process.versions.v8,
    os: `${type()} ${release()} ${process.arch}`,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    loadAverage: loadavg(),
    piscina: packageVersion('piscina'),
    anthropicSdk: packageVersion('@anthropic-ai/sdk'),
    commit: git(['rev-parse', '--short', 'HEAD']),
    uncommittedSourceChanges: changed === undefined ? undefined : changed.length > 0,
  };
}
