#!/usr/bin/env node
// A CI admission gate for tool package updates (a dependency bump, a vendored package's new
// version). It passes when every selftest passes and every declaration the model reads is the one
// in the committed lock; then it re-pins what changed only in code, so the job can commit the lock.
// It fails, naming the change, when a description, schema or any other declaration field changed,
// or a tool is new: a person reviews what the model will read, then runs `toolhost pin`.
//
//   node gate.mjs [--lock FILE] [--isolation TIER] <package-or-module>...
//
// Exit 0: admitted. Exit 1: refused (the reason on stderr). Exit 2: usage, or a lock that is missing.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const usage = 'usage: node gate.mjs [--lock FILE] [--isolation TIER] <package-or-module>...';
let parsed;
try {
  parsed = parseArgs({
    options: { lock: { type: 'string', default: 'toolhost.lock.json' }, isolation: { type: 'string' } },
    allowPositionals: true,
  });
} catch (error) {
  stop(2, `${error.message}; ${usage}`);
}
const packages = parsed.positionals;
if (packages.length === 0) stop(2, `no package given; ${usage}`);
const lock = parsed.values.lock;
if (!existsSync(lock))
  stop(
    2,
    `no lock at ${lock}: review the packages, pin them (toolhost pin --lock ${lock} ...) and commit the lock`,
  );
const tier = parsed.values.isolation === undefined ? [] : ['--isolation', parsed.values.isolation];

// 1. The selftests, in the tier named (else the strongest this machine has).
const selftest = await toolhost(['selftest', '--json', ...tier, ...packages]);
if (!selftest.report.ok) {
  for (const result of selftest.report.results.filter(
    (row) => row.status === 'failed' || row.status === 'left-out',
  ))
    say(
      `${result.status}: ${result.tool ?? result.module} (${result.package}): ${result.error?.code}: ${result.error?.message}`,
    );
  if (selftest.report.writesOutsideTmpDir?.length > 0)
    say('written outside any tmpDir: see toolhost selftest');
  if (selftest.report.processesLeft?.length > 0) say('processes left running: see toolhost selftest');
  const { passed, failed, leftOut } = selftest.report.counts;
  stop(
    1,
    `refused: the selftests failed (${passed} passed, ${failed} failed${leftOut > 0 ? `, ${leftOut} left out` : ''})`,
  );
}
say(
  `selftests passed (${selftest.report.counts.passed} passed, isolation ${selftest.report.isolation.tier})`,
);

// 2. What the model would read, against the lock: toolhost withholds every tool whose entry differs.
const listed = await toolhost(['list', '--json', '--lock', lock, ...tier, ...packages]);
const refusals = [];
const codeOnly = [];
for (const source of listed.report.sources) {
  for (const module of source.leftOut) {
    const label = `${module.name ?? module.module} (${source.packageName ?? source.source})`;
    if (module.code === 'CODE_CHANGED') codeOnly.push(label);
    else if (module.code === 'DECLARATION_CHANGED') {
      refusals.push(`declaration changed: ${label}`);
      for (const change of module.difference ?? [])
        refusals.push(
          `    ${change.field}: ${JSON.stringify(change.before)} → ${JSON.stringify(change.after)}`,
        );
    } else if (module.code === 'NOT_PINNED') refusals.push(`not in the lock: ${label}: ${module.reason}`);
    else refusals.push(`left out: ${label}: ${module.code}: ${module.reason}`);
  }
}
if (refusals.length > 0) {
  for (const line of refusals) say(line);
  stop(
    1,
    `refused: what the model reads changed since ${lock}; review it, then run toolhost pin --lock ${lock} and commit the lock`,
  );
}

// 3. Only code changed (the declarations are the reviewed ones, the selftests pass): pin the new
//    content. Pin reads every declaration again, so a change between step 2 and now is caught too.
if (codeOnly.length > 0) {
  const before = await readFile(lock, 'utf8');
  const pinned = await toolhost(['pin', '--json', '--lock', lock, ...tier, ...packages]);
  // What the model reads is each entry's declaration digest: pinning may change the content (and
  // the files) an entry records, never a digest the lock already held, nor add an entry.
  const reviewed = declarationDigests(before);
  const changedDeclarations = [...declarationDigests(await readFile(lock, 'utf8'))].filter(
    ([entry, digest]) => reviewed.get(entry) !== digest,
  );
  if (!pinned.report.ok || changedDeclarations.length > 0) {
    await writeFile(lock, before);
    for (const [entry] of changedDeclarations) say(`declaration changed while pinning: ${entry}`);
    stop(1, `refused: toolhost pin found more than a code change; ${lock} is left as it was`);
  }
  say(`re-pinned (code changed, declarations unchanged): ${codeOnly.join(', ')}`);
}
say(`admitted: ${selftest.report.counts.passed} selftests passed, no declaration changed since ${lock}`);

/** Runs the toolhost CLI installed beside this script and parses its --json document. */
async function toolhost(args) {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('toolhost/package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  const cli = join(dirname(manifestPath), manifest.bin.toolhost);
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { maxBuffer: 64 * 1024 * 1024 }, (error, out, err) =>
      resolve({ code: error === null ? 0 : error.code, stdout: out, stderr: err }),
    );
  });
  // Exit 2 is toolhost's usage error (a missing lock among them): its one line says what to fix.
  if (code === 2) stop(2, `toolhost ${args[0]}: ${stderr.trim()}`);
  try {
    return { code, report: JSON.parse(stdout) };
  } catch {
    stop(2, `toolhost ${args[0]} exited ${code} without a JSON report: ${stderr.trim()}`);
  }
}

/** `tool (package module)` → declaration digest, for every entry of a lock file's text. */
function declarationDigests(lockText) {
  const entries = JSON.parse(lockText).tools ?? [];
  return new Map(
    entries.map((entry) => [
      `${entry.declaration?.name} (${entry.package ?? '-'} ${entry.module})`,
      entry.declarationDigest,
    ]),
  );
}

function say(line) {
  console.error(`gate: ${line}`);
}

function stop(code, message) {
  say(message);
  process.exit(code);
}
