/**
 * The two ways to start a loop: a Messages API body (`{ model, max_tokens, messages, tools?, ... }`)
 * or a prompt string with the prompt-form options.
 */
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
  ToolUnion,
} from '@anthropic-ai/sdk/resources/messages';
import { expectPositiveInteger, show } from '../shared/expect.js';
import { checkLoopTool, invalid, type RunToolsOptions } from './loop-options.js';
import type { LoopTool } from './loop-tool.js';
import { toolName } from './tool-catalogue.js';

/**
 * The body form: a Messages API request body, without `stream` (the loop streams when `onEvent` is
 * given). Its `tools` may include loop tools (with `run`); server tools go to the API unchanged.
 */
export type ToolLoopBody = Omit<MessageCreateParamsNonStreaming, 'tools' | 'stream'> & {
  tools?: Array<ToolUnion | LoopTool>;
};

/** `max_tokens` of a prompt-form request when `maxTokens` isn't given. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface ResolvedBody {
  /** Everything sent with every request except `messages` and `tools`. */
  params: Omit<MessageCreateParamsNonStreaming, 'messages' | 'tools'>;
  messages: MessageParam[];
  bodyTools: ReadonlyArray<ToolUnion | LoopTool>;
}

export function resolveBody(bodyOrPrompt: ToolLoopBody | string, options: RunToolsOptions): ResolvedBody {
  if (typeof bodyOrPrompt === 'string') return fromPrompt(bodyOrPrompt, options);
  if (typeof bodyOrPrompt !== 'object' || bodyOrPrompt === null || Array.isArray(bodyOrPrompt)) {
    invalid(`Expected a prompt string or a request body, got ${show(bodyOrPrompt)}`);
  }
  for (const promptOption of ['model', 'maxTokens', 'system'] as const) {
    if (options[promptOption] !== undefined) {
      invalid(
        `Expected no \`${promptOption}\` option with a request body (put it in the body), got ${show(options[promptOption])}`,
      );
    }
  }
  const { messages, tools = [], ...params } = bodyOrPrompt;
  if ('stream' in params && params.stream !== undefined) {
    invalid(`Expected a body without \`stream\` (pass \`onEvent\` to stream), got ${show(params.stream)}`);
  }
  if (!Array.isArray(messages)) invalid(`Expected \`messages\` to be an array, got ${show(messages)}`);
  if (!Array.isArray(tools)) invalid(`Expected \`tools\` in the body to be an array, got ${show(tools)}`);
  for (const [index, tool] of tools.entries()) {
    if (typeof tool === 'object' && tool !== null && Object.hasOwn(tool, 'run')) {
      checkLoopTool(tool, `body.tools[${index}]`);
    }
  }
  return { params, messages: [...messages], bodyTools: tools };
}

function fromPrompt(prompt: string, options: RunToolsOptions): ResolvedBody {
  if (prompt === '') invalid('Expected the prompt to be a non-empty string, got ""');
  const model = options.model ?? process.env['ANTHROPIC_MODEL'];
  if (typeof model !== 'string' || model === '') {
    invalid(`Expected \`model\` (or ANTHROPIC_MODEL) to be a non-empty string, got ${show(model)}`);
  }
  expectPositiveInteger('maxTokens', options.maxTokens);
  if (options.system !== undefined && typeof options.system !== 'string') {
    invalid(`Expected \`system\` to be a string, got ${show(options.system)}`);
  }
  return {
    params: {
      model,
      max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(options.system === undefined ? {} : { system: options.system }),
    },
    messages: [{ role: 'user', content: prompt }],
    bodyTools: [],
  };
}

/** Names must be unique across the body's tools and the loop tools (the API rejects duplicates). */
export function checkUniqueNames(tools: ReadonlyArray<ToolUnion | LoopTool>): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = toolName(tool);
    if (name === undefined) continue;
    if (seen.has(name)) invalid(`Expected tool names to be unique, got ${show(name)} twice`);
    seen.add(name);
  }
}
