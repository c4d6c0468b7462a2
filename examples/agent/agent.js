#!/usr/bin/env node
// An agent that embeds toolhost: it loads a tool package into a ToolHost, then runs the Anthropic
// Messages API's tool-use loop (runTools) over it with the official SDK's client. Every call the
// model asks for runs in the isolation tier named below, never in this process.
//
//   node agent.js [--tools DIR] [--model MODEL] <prompt>
//
// Reads ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL and ANTHROPIC_MODEL as the SDK and toolhost
// do, and WEATHER_TOOLS_BASE_URL, which it passes on to the tools (they get no other variable).
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import { runTools, ToolHost, ToolLoopError } from 'toolhost';

const usage = 'usage: node agent.js [--tools DIR] [--model MODEL] <prompt>';
let parsed;
try {
  parsed = parseArgs({
    options: {
      tools: { type: 'string', default: fileURLToPath(new URL('../weather-tools', import.meta.url)) },
      model: { type: 'string', default: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5' },
    },
    allowPositionals: true,
  });
} catch (error) {
  fail(2, `${error.message}; ${usage}`);
}
const prompt = parsed.positionals.join(' ').trim();
if (prompt === '') fail(2, `no prompt given; ${usage}`);
if (!process.env.ANTHROPIC_API_KEY) fail(2, 'ANTHROPIC_API_KEY is not set: set it to your API key');

const host = new ToolHost({
  // Named on purpose: each package runs in processes of its own, in a bubblewrap sandbox where the
  // machine has one, so a hostile tool can't reach this process's memory, files or API key.
  isolation: 'process',
  // weather-tools asks for its weather service in its manifest; grant it what it asks.
  allowNetwork: { 'weather-tools': true },
  envAllowList: ['WEATHER_TOOLS_BASE_URL'],
});

try {
  const report = await host.load(parsed.values.tools);
  for (const module of report.modules) {
    if (module.state !== 'offered')
      console.error(`agent: left out ${module.path}: ${module.reason ?? module.state}`);
  }
  const client = new Anthropic(); // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
  const { response } = await runTools(client, prompt, {
    host,
    model: parsed.values.model,
    maxTokens: 1024,
    system: 'You answer questions about the weather with the tools you have. Be brief.',
    toolTimeoutMs: 15_000,
    beforeToolCall: ({ name, input }) => {
      console.error(`→ ${name} ${JSON.stringify(input)}`);
      return true;
    },
  });
  const answer = response.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
  console.log(answer);
} catch (error) {
  if (!(error instanceof ToolLoopError)) throw error;
  process.exitCode = 1;
  console.error(`agent: the conversation failed (${error.type}): ${error.message}`);
} finally {
  await host.close();
}

function fail(code, message) {
  console.error(`agent: ${message}`);
  process.exit(code);
}
