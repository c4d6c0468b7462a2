/**
 * 15. Start-up where users wait: a fresh Node process that imports toolhost and exits, and
 * `toolhost --version`, against a bare `node -e 0` (Node's own start, the floor of both), each a
 * fresh process, interleaved run by run so load on the machine falls on all three alike.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl } from '../lib/library.mjs';
import { summarize } from '../lib/stats.mjs';

const rounds = iterations(30, 10);
const entry = new URL('src/index.js', distUrl).href;
const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));

const COMMANDS = {
  bareNode: ['-e', '0'],
  importToolhost: ['-e', `import(${JSON.stringify(entry)})`],
  version: [cli, '--version'],
};

/** ms from spawning `node args` to its exit (which must be 0). */
function timed(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`node ${args.join(' ')} exited with ${code}`));
    });
  });
}

log(`start-up: ${rounds} rounds of ${Object.keys(COMMANDS).join(', ')}`);
const samples = Object.fromEntries(Object.keys(COMMANDS).map((name) => [name, []]));
// One unmeasured round first: the file cache warms for every command alike.
for (const args of Object.values(COMMANDS)) await timed(args);
for (let round = 0; round < rounds; round++) {
  for (const [name, args] of Object.entries(COMMANDS)) samples[name].push(await timed(args));
}
report({
  rounds,
  stats: Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, summarize(values)])),
});
