/**
 * Where a process-tier package's first call goes, stage by stage (`node bench/process-start-stages.mjs`
 * after `npm run build`; `BENCH_STARTS` to change the count), against the worker tier's first call in
 * the same run, interleaved. Each stage is timed on the host's clock from the events it sees:
 * 1. `node -e 0`, and the same inside the sandbox (bubblewrap's own cost);
 * 2. a package process: made → its hello (bubblewrap, Node's start, the child's modules) → ready (its
 *    memory cgroup, its init: toolhost's call code loaded and its guards in place) → the reply (the
 *    call: the tool module imported and run on the process's main thread; in a build whose process
 *    ran a pool of workers, a worker's start too);
 * 3. a worker-tier pool: made → the call started → the reply.
 * `--dist=<folder laid out like dist/>,…` measures those builds instead, round by round in turns
 * (a change against the build before it).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const distArg = process.argv.find((arg) => arg.startsWith('--dist='));
const dists =
  distArg === undefined
    ? [new URL('../dist/', import.meta.url)]
    : distArg
        .slice('--dist='.length)
        .split(',')
        .map((folder) => pathToFileURL(`${resolve(folder)}/`));
const builds = [];
for (const dist of dists) {
  const load = (path) => import(new URL(path, dist).href);
  builds.push({
    name: fileURLToPath(dist),
    ...(await load('src/process/pool/domain-child.js')),
    ...(await load('src/process/sandbox/sandbox.js')),
    ...(await load('src/process/sandbox/process-tier.js')),
    ...(await load('src/calls/worker-pool.js')),
    ...(await load('src/calls/isolation.js')),
  });
}
const { processEnvironment, sandboxArgs, workerExecArgv } = builds[0];

const STARTS = Number(process.env.BENCH_STARTS ?? 12);
const ECHO = fileURLToPath(new URL('../fixtures/modules/echo.js', import.meta.url));
const environment = await processEnvironment();
const root = await mkdtemp(join(tmpdir(), 'toolhost-bench-stages-'));
const call = { dataDir: root, tmpDir: join(root, 'tmp'), maxResultBytes: 65_536, maxLogChars: 1024 };
const limits = {
  maxThreads: 2,
  idleTimeoutMs: 30_000,
  heapMb: 64,
  stackMb: 4,
  timeoutGraceMs: 100,
  env: {},
  execArgv: workerExecArgv('worker', { domain: root, tmpDir: call.tmpDir }, { allowAddons: false }),
  allowAddons: false,
  call,
};
let ids = 0;
const task = () => {
  const taskId = `t${ids++}`;
  return {
    kind: 'run',
    taskId,
    callId: taskId,
    sessionId: 'bench',
    moduleUrl: pathToFileURL(ECHO).href,
    args: { text: taskId },
    withheld: [],
    timeoutMs: 60_000,
  };
};

function exitTime(command, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { stdio: 'ignore', env: {} });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

function processStages({ DomainChild, processEnvironment }) {
  return new Promise((resolve, reject) => {
    const marks = { made: performance.now() };
    let child;
    const sent = task();
    child = new DomainChild({
      init: { type: 'init', mode: 'calls', limits },
      paths: { readOnly: [root], tmpDir: call.tmpDir, network: false },
      // Both ways a build has been told its flags: a build before one isolate per process read
      // `allowAddons`, one after reads its Node flags (a worker's heap and stack bounds among them).
      allowAddons: false,
      nodeFlags: [...limits.execArgv, `--max-old-space-size=${limits.heapMb}`],
      heapMb: limits.heapMb,
      memoryMb: 512,
      replyLimits: call,
      environment: processEnvironment,
      onReady: () => {
        marks.ready = performance.now();
        child.send({ type: 'run', task: sent });
      },
      onNote: (note) => {
        if (note.type === 'reply') {
          marks.reply = performance.now();
          child.kill({ cause: 'ended', message: 'was ended' });
        }
      },
      onEnd: (end) => (marks.reply === undefined ? reject(new Error(end.message)) : resolve(marks)),
    });
    // Held busy, as a pool holds a process with a call waiting: its handles keep this run alive.
    child.busy = true;
    // The hello is seen inside DomainChild; its greeting is what follows it at once.
    const greet = child.send.bind(child);
    child.send = (message) => {
      if (message.type === 'init') marks.hello = performance.now();
      greet(message);
    };
  });
}

async function workerStages({ TrustDomainPool }) {
  const marks = { made: performance.now() };
  const pool = new TrustDomainPool(limits, () => {});
  const reply = await pool.run(task(), { onStarted: () => (marks.started = performance.now()) });
  marks.reply = performance.now();
  if (!reply.ok) throw new Error(JSON.stringify(reply));
  await pool.close();
  return marks;
}

const node = process.execPath;
const bwrapNode = environment.sandbox.available
  ? [
      environment.sandbox.bwrap,
      [...sandboxArgs({ readOnly: [], tmpDir: call.tmpDir, network: false }, environment.sandbox), node],
    ]
  : undefined;
const stageNames = [
  'toHello',
  'helloToReady',
  'readyToReply',
  'processFirst',
  'workerToStarted',
  'workerStartedToReply',
  'workerFirst',
];
const rows = { nodeBare: [], nodeInSandbox: [] };
for (const build of builds) rows[build.name] = Object.fromEntries(stageNames.map((name) => [name, []]));
for (const build of builds) {
  await processStages(build);
  await workerStages(build);
}
for (let round = 0; round < STARTS; round += 1) {
  rows.nodeBare.push(await exitTime(node, ['-e', '0']));
  if (bwrapNode !== undefined)
    rows.nodeInSandbox.push(await exitTime(bwrapNode[0], [...bwrapNode[1], '-e', '0']));
  for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
    const stages = rows[build.name];
    const p = await processStages(build);
    stages.toHello.push(p.hello - p.made);
    stages.helloToReady.push(p.ready - p.hello);
    stages.readyToReply.push(p.reply - p.ready);
    stages.processFirst.push(p.reply - p.made);
    const w = await workerStages(build);
    stages.workerToStarted.push(w.started - w.made);
    stages.workerStartedToReply.push(w.reply - w.started);
    stages.workerFirst.push(w.reply - w.made);
  }
}
await rm(root, { recursive: true, force: true });
const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
const sandbox = environment.sandbox.available ? 'bubblewrap' : 'none';
console.log(`Node ${process.version}, sandbox ${sandbox}, ${STARTS} rounds, medians (ms)`);
console.log(
  `node -e 0 ${median(rows.nodeBare).toFixed(1)}, in the sandbox ${rows.nodeInSandbox.length > 0 ? median(rows.nodeInSandbox).toFixed(1) : 'n/a'}`,
);
console.log(['stage'.padEnd(22), ...builds.map((build) => build.name.slice(-40).padStart(42))].join(''));
for (const name of stageNames) {
  console.log(
    [name.padEnd(22), ...builds.map((build) => median(rows[build.name][name]).toFixed(1).padStart(42))].join(
      '',
    ),
  );
}
for (const build of builds) {
  const stages = rows[build.name];
  console.log(
    `${build.name}: first call, process vs worker ${(median(stages.processFirst) / median(stages.workerFirst)).toFixed(2)}x`,
  );
}
