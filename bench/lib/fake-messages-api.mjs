/**
 * A tiny local Messages API (node:http on 127.0.0.1) for the loop benchmark. It is stateless: a
 * request whose last message carries tool results gets a final `end_turn` text; any other request gets
 * one `tool_use` of the echo tool. JSON only (the loop benchmark sends non-streaming requests).
 */
import { createServer } from 'node:http';

let nextId = 0;

function message(content, stopReason) {
  nextId += 1;
  return {
    id: `msg_bench_${nextId}`,
    type: 'message',
    role: 'assistant',
    model: 'bench-model',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  };
}

function answer(body) {
  const last = body.messages.at(-1);
  const hasResults =
    last?.role === 'user' &&
    Array.isArray(last.content) &&
    last.content.some((block) => block.type === 'tool_result');
  if (hasResults) return message([{ type: 'text', text: 'done' }], 'end_turn');
  return message(
    [{ type: 'tool_use', id: `toolu_bench_${nextId}`, name: 'echo', input: { text: 'hello' } }],
    'tool_use',
  );
}

/** Starts the server; resolves to its base URL and a `close()`. */
export async function startFakeMessagesApi() {
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const json = JSON.stringify(answer(body));
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json),
      });
      response.end(json);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    baseURL: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
