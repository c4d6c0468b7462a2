/**
 * Run inside the sandbox in front of an MCP server that is not Node (a Python or Go server, curl in
 * a shell script): such a program knows its proxy only as `HTTP(S)_PROXY`, a TCP address, and the
 * sandbox has no network but its own loopback. This listens on a loopback port there, carries each
 * connection to the egress proxy's Unix socket byte for byte (the proxy decides, as for a Node
 * server's agents), and starts the server with the proxy variables pointing at that port. The
 * server's stdio is its own (inherited): the bridge never sees the protocol. It ends with the
 * server, with the server's exit code or signal.
 *
 * Usage (in the sandbox): `node egress-bridge.js <socket path> <command> [args…]`.
 */
import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

const [socketPath, command, ...args] = process.argv.slice(2);
if (socketPath === undefined || command === undefined) {
  process.stderr.write('toolhost egress bridge: usage: egress-bridge <socket> <command> [args...]\n');
  process.exit(2);
}

const bridge = createServer({ pauseOnConnect: true }, (client: Socket) => {
  const proxy = connect({ path: socketPath });
  const end = () => {
    client.destroy();
    proxy.destroy();
  };
  client.on('error', end);
  proxy.on('error', end);
  client.once('close', end);
  proxy.once('close', end);
  proxy.once('connect', () => {
    client.pipe(proxy);
    proxy.pipe(client);
    client.resume();
  });
});
bridge.on('error', (error) => {
  process.stderr.write(`toolhost egress bridge: ${error.message}\n`);
  process.exit(1);
});
bridge.listen(0, '127.0.0.1', () => {
  const address = bridge.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const proxy = `http://127.0.0.1:${port}`;
  const server = spawn(command, args, {
    stdio: 'inherit',
    env: {
      ...process.env,
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      ALL_PROXY: proxy,
      all_proxy: proxy,
      NO_PROXY: '',
      no_proxy: '',
    },
  });
  server.once('error', (error) => {
    process.stderr.write(`toolhost egress bridge: could not start ${command}: ${error.message}\n`);
    process.exit(127);
  });
  server.once('exit', (code, signal) => {
    // A shell's way of saying which signal ended it.
    process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
  });
  // The sandbox ends the whole tree; a signal to the bridge alone goes on to the server.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => server.kill(signal));
  }
});
