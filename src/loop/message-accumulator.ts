/**
 * Builds a `Message` from the raw events of one streamed turn.
 *
 * The SDK's own accumulator (`MessageStream`) quietly repairs a tool input that is cut off (`{"city":
 * "Ber` comes out as `{}`), passes on JSON that is not an object, and throws, failing the whole stream,
 * on input that isn't JSON at all. With `eager_input_streaming` the API does not validate tool input, so
 * any of these can happen. This one parses each input strictly once its block ends: input that is not a
 * JSON object is recorded as invalid and stored as `{}` (the only input the API accepts in a replayed
 * turn).
 */
import type { ContentBlock, Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';

/** A received turn: the message, and the ids of its tool calls whose input was not a JSON object. */
export interface ReceivedTurn {
  message: Message;
  invalidInputIds: ReadonlySet<string>;
}

export class MessageAccumulator {
  #message: Message | undefined;
  #stopped = false;
  readonly #inputJson = new Map<number, string>();
  readonly #invalidInputIds = new Set<string>();

  add(event: RawMessageStreamEvent): void {
    if (event.type === 'message_start') {
      // Copied: the caller's `onEvent` holds the same event objects.
      this.#message = {
        ...event.message,
        content: [...event.message.content],
        usage: { ...event.message.usage },
      };
      return;
    }
    const message = this.#message;
    if (message === undefined) return;
    switch (event.type) {
      case 'content_block_start':
        message.content[event.index] = { ...event.content_block };
        return;
      case 'content_block_delta':
        this.#addDelta(message, event.index, event.delta);
        return;
      case 'content_block_stop':
        this.#finishBlock(message, event.index);
        return;
      case 'message_delta': {
        const { container, ...delta } = event.delta;
        Object.assign(message, delta);
        if (container !== null && container !== undefined) message.container = container;
        for (const [key, value] of Object.entries(event.usage)) {
          // Usage counters are whole-message totals, omitted (null) when they don't apply.
          if (value !== null && value !== undefined) Object.assign(message.usage, { [key]: value });
        }
        return;
      }
      case 'message_stop':
        this.#stopped = true;
        return;
    }
  }

  /** The whole turn, or `undefined` for a stream that ended before `message_stop` (it broke off). */
  finish(): ReceivedTurn | undefined {
    if (this.#message === undefined || !this.#stopped) return undefined;
    return { message: this.#message, invalidInputIds: this.#invalidInputIds };
  }

  #addDelta(
    message: Message,
    index: number,
    delta: Extract<RawMessageStreamEvent, { type: 'content_block_delta' }>['delta'],
  ): void {
    const block = message.content[index];
    if (block === undefined) return;
    switch (delta.type) {
      case 'text_delta':
        if (block.type === 'text') message.content[index] = { ...block, text: block.text + delta.text };
        return;
      case 'citations_delta':
        if (block.type === 'text') {
          message.content[index] = { ...block, citations: [...(block.citations ?? []), delta.citation] };
        }
        return;
      case 'input_json_delta':
        this.#inputJson.set(index, (this.#inputJson.get(index) ?? '') + delta.partial_json);
        return;
      case 'thinking_delta':
        if (block.type === 'thinking')
          message.content[index] = { ...block, thinking: block.thinking + delta.thinking };
        return;
      case 'signature_delta':
        if (block.type === 'thinking') message.content[index] = { ...block, signature: delta.signature };
        return;
    }
  }

  #finishBlock(message: Message, index: number): void {
    const block = message.content[index];
    const json = this.#inputJson.get(index);
    if (block === undefined || json === undefined || !tracksInput(block)) return;
    // A call without arguments streams no JSON at all (or only empty deltas): that is `{}`.
    const input = json === '' ? {} : parseObject(json);
    if (input === undefined) this.#invalidInputIds.add(block.id);
    message.content[index] = { ...block, input: input ?? {} };
  }
}

function tracksInput(
  block: ContentBlock,
): block is Extract<ContentBlock, { type: 'tool_use' } | { type: 'server_tool_use' }> {
  return block.type === 'tool_use' || block.type === 'server_tool_use';
}

/** The JSON object `text` holds, or `undefined` when it holds anything else (or isn't JSON). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
