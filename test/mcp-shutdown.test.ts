/**
 * Shutting `toolhost serve` down, each way a client or an operator does it, with a call running: the
 * call is answered (`HOST_CLOSED`), the process exits 0, the hosting process is gone too, and the
 * host's temp folder (`toolhost-<pid>-*`) is removed.
 */
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import {
  childPids,
  exited,
  GOOD,
  hostTempDirs,
  processRunning,
  RecordingStdioTransport,
  startHttp,
  stoppedRunning,
} from './support/mcp-serve.js';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

/** Serve over stdio, with `stall` running (its temp folder made) when this resolves. */
async function serveWithCallRunning() {
  const tmp = freshDir('toolhost-mcp-shutdown');
  dirs.push(tmp);
  const transport = new RecordingStdioTransport([GOOD], tmp.path);
  const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.child.pid as number;
  const [hostingPid] = childPids(pid);
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const call = client.callTool({ name: 'stall', arguments: {} }, CallToolResultSchema, {
    onprogress: () => started(),
  });
  call.catch(() => {});
  await running;
  expect(hostingPid).toBeDefined();
  expect(hostTempDirs(tmp.path, hostingPid as number)).toHaveLength(1);
  return { tmp, transport, pid, hostingPid: hostingPid as number };
}

/** The answer the server wrote for the `stall` call, read on the wire. */
function stallAnswer(transport: RecordingStdioTransport): unknown {
  return transport.messages.find(
    (message) => 'result' in message && JSON.stringify(message).includes('HOST_CLOSED'),
  );
}

describe('toolhost serve over stdio shuts down cleanly', () => {
  it.each([
    ['the client closes stdin', (transport: RecordingStdioTransport) => void transport.close()],
    ['SIGTERM', (transport: RecordingStdioTransport) => void transport.child.kill('SIGTERM')],
    ['SIGINT', (transport: RecordingStdioTransport) => void transport.child.kill('SIGINT')],
  ])(
    'when %s: the running call is answered, both processes end, no temp folder is left',
    async (_how, stop) => {
      const { tmp, transport, pid, hostingPid } = await serveWithCallRunning();
      const stderrClosed = once(transport.child.stderr as Readable, 'end');
      stop(transport);
      expect(await exited(transport.child)).toEqual({ code: 0, signal: null });
      // The hosting process writes to the same stderr: its end means the hosting process is gone too.
      await stderrClosed;
      expect(stallAnswer(transport)).toMatchObject({
        result: { isError: true, content: [{ type: 'text', text: expect.stringMatching(/^HOST_CLOSED: /) }] },
      });
      expect(processRunning(pid)).toBe(false);
      expect(processRunning(hostingPid)).toBe(false);
      expect(hostTempDirs(tmp.path, hostingPid)).toEqual([]);
    },
  );

  it('when the relay is killed outright, the hosting process sees its channel close and cleans up', async () => {
    const { tmp, transport, hostingPid } = await serveWithCallRunning();
    const stderrClosed = once(transport.child.stderr as Readable, 'end');
    transport.child.kill('SIGKILL');
    await stderrClosed;
    expect(await stoppedRunning(hostingPid)).toBe(true);
    expect(hostTempDirs(tmp.path, hostingPid)).toEqual([]);
  });
});

describe('when the hosting process dies', () => {
  it('every request still open is answered with an error, and serve exits 1 saying why', async () => {
    const { transport, hostingPid } = await serveWithCallRunning();
    process.kill(hostingPid, 'SIGKILL');
    expect(await exited(transport.child)).toEqual({ code: 1, signal: null });
    expect(
      transport.messages.find((message) => 'error' in message && message.error !== undefined),
    ).toMatchObject({ error: { code: -32603, message: 'the tool host process ended unexpectedly' } });
    await transport.stderr.waitFor(/toolhost: the tool host process ended unexpectedly \(SIGKILL\)/);
  });
});

describe('toolhost serve --http shuts down cleanly', () => {
  it('on SIGTERM: the running call is answered on its stream, the process ends, no temp folder is left', async () => {
    const tmp = freshDir('toolhost-mcp-shutdown-http');
    dirs.push(tmp);
    const serve = await startHttp([GOOD], tmp.path);
    const pid = serve.child.pid as number;
    const response = await fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'stall', arguments: {}, _meta: { progressToken: 'p1' } },
      }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('notifications/progress')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(hostTempDirs(tmp.path, pid)).toHaveLength(1);
    serve.child.kill('SIGTERM');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toContain('HOST_CLOSED: ');
    expect(await exited(serve.child)).toEqual({ code: 0, signal: null });
    expect(processRunning(pid)).toBe(false);
    expect(hostTempDirs(tmp.path, pid)).toEqual([]);
  });
});
