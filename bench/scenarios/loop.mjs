/**
 * 7. The loop's per-turn overhead: a conversation of two requests (one `tool_use` turn, then
 * `end_turn`) against a local fake Messages API, driven by the real SDK client, through `runTools`
 * and through a plain `client.messages.create` loop that runs the same tool the same way. Once with
 * the sandboxed host tool (host.call on both sides) and once with an in-process tool. Interleaved per
 * conversation.
 */
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { run as echo } from '../fixtures/bench-tools/echo.js';
import { iterations, log, report } from '../lib/child.mjs';
import { startFakeMessagesApi } from '../lib/fake-messages-api.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const toolhost = await importToolhost();
const { ToolHost, runTools } = toolhost;
if (typeof runTools !== 'function') {
  report({ skipped: 'the built library exports no runTools' });
  process.exit(0);
}

const api = await startFakeMessagesApi();
const client = new Anthropic({ apiKey: 'x', baseURL: api.baseURL, maxRetries: 0 });
const host = new ToolHost({ logger: quietLogger() });
await host.load(fileURLToPath(benchToolsDir));
const hostTools = host.toAnthropicTools().filter((tool) => tool.name === 'echo');
const loopEcho = {
  name: 'echo',
  description: 'Returns the text it is given',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: (input) => echo(input),
};
const body = () => ({
  model: 'bench-model',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Echo hello' }],
});

/** The baseline: the smallest correct loop, running tools with `runTool(name, input, id)`. */
async function plainLoop(tools, runTool) {
  const messages = body().messages;
  let requests = 0;
  for (;;) {
    const response = await client.messages.create({ ...body(), messages, tools }, { maxRetries: 0 });
    requests += 1;
    messages.push({ role: 'assistant', content: response.content });
    if (response.stop_reason !== 'tool_use') return requests;
    const results = [];
    for (const block of response.content) {
      if (block.type !== 'tool_use') continue;
      results.push({
        type: 'tool_result',
        tool_use_id: block.id,
        ...(await runTool(block.name, block.input, block.id)),
      });
    }
    messages.push({ role: 'user', content: results });
  }
}

const viaHost = async (name, input, id) => {
  const outcome = await host.call(name, input, { callId: id });
  return { content: outcome.content, is_error: outcome.isError };
};
const inProcess = async (_name, input) => ({ content: await echo(input) });
const loopTools = [loopEcho].map(({ run: _run, ...definition }) => definition);

// A host whose only offered tool is echo, so both sides offer the same one tool.
const echoOnlyHost = {
  list: () => host.list().filter((tool) => tool.name === 'echo'),
  call: (name, args, options) => host.call(name, args, options),
};

const variants = {
  plainHostTool: () => plainLoop(hostTools, viaHost),
  runToolsHostTool: () => runTools(client, body(), { host: echoOnlyHost }),
  plainInProcessTool: () => plainLoop(loopTools, inProcess),
  runToolsInProcessTool: () => runTools(client, body(), { tools: [loopEcho] }),
};

const first = await variants.runToolsHostTool();
const finalText = first.response.content[0]?.text;
if (finalText !== 'done' || first.messages.length !== 4) {
  throw new Error(`runTools did not finish the conversation: ${JSON.stringify(first.messages)}`);
}

const cycles = iterations(400, 100);
log(`loop: ${cycles} conversations per variant, 2 requests each`);
const samples = await interleave({ variants, cycles, warmupCycles: iterations(40, 20) });
await host.close();
await api.close();

const stats = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
report({ requestsPerConversation: 2, cycles, stats });
