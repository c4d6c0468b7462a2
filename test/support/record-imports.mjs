// Preloaded (`node --import`) into a child process: registers module hooks that note every module
// the process resolves or requires, and prints the packages they came from as one JSON line on exit. Hooks run
// on a thread of their own, so the names reach this thread over a port.
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const urls = new Set();
port1.on('message', (url) => urls.add(url));
port1.unref();
register('./record-imports-hooks.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });

process.on('exit', () => {
  // Messages still in flight are read before the process goes.
  for (let message = receive(); message !== undefined; message = receive()) urls.add(message.message);
  // CommonJS modules loaded by require() don't pass the hooks on every Node line: their cache does.
  for (const file of Object.keys(createRequire(import.meta.url).cache)) urls.add(file);
  const packages = new Set();
  for (const url of urls) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match !== null) packages.add(match[1]);
  }
  process.stderr.write(`\nimported-packages ${JSON.stringify([...packages].sort())}\n`);
});

import { receiveMessageOnPort } from 'node:worker_threads';

function receive() {
  return receiveMessageOnPort(port1);
}
