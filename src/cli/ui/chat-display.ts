/**
 * What `toolhost chat` shows: the model's text as it streams in, and one compact line per tool call
 * (`→ name {input}` as the model asks for it) and per outcome (`← name: text` or `← name failed`).
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ToolOutcome } from '../../boundary/outcome.js';
import { describeBlock } from './content-display.js';
import { type OutputStream, oneLine, type Style, truncate } from './terminal.js';

/** How much of a tool call's input or outcome a line shows. */
const PREVIEW_CHARACTERS = 160;

/** How many lines of a multi-line error (an input that fails several schema rules) are shown. */
const ERROR_LINES = 8;

export class ChatDisplay {
  readonly #stream: OutputStream;
  readonly #style: Style;
  #atLineStart = true;
  /** The tool calls of the block being streamed: index → name and input JSON so far. */
  readonly #toolInputs = new Map<number, { name: string; json: string }>();

  constructor(stream: OutputStream, style: Style) {
    this.#stream = stream;
    this.#style = style;
  }

  /** Every raw event of every turn (runTools' `onEvent`). */
  onEvent(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case 'content_block_start':
        if (event.content_block.type === 'text') this.#newLine();
        if (event.content_block.type === 'tool_use') {
          this.#toolInputs.set(event.index, { name: event.content_block.name, json: '' });
        }
        break;
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') this.#write(event.delta.text);
        if (event.delta.type === 'input_json_delta') {
          const call = this.#toolInputs.get(event.index);
          if (call !== undefined) call.json += event.delta.partial_json;
        }
        break;
      case 'content_block_stop': {
        const call = this.#toolInputs.get(event.index);
        if (call === undefined) break;
        this.#toolInputs.delete(event.index);
        this.#line(this.#style.cyan(`→ ${call.name} ${preview(call.json === '' ? '{}' : call.json)}`));
        break;
      }
      default:
        break;
    }
  }

  /**
   * A call's outcome, as the host answered it. An error's further lines (such as the schema rules an
   * input broke) follow indented, as lines.
   */
  toolFinished(name: string, outcome: ToolOutcome): void {
    if (outcome.isError) {
      const code = outcome.error?.code ?? 'TOOL_ERROR_RESULT';
      const [first = '', ...rest] = (outcome.error?.message ?? describe(outcome))
        .replace(/\n+$/, '')
        .split('\n');
      this.#line(this.#style.red(`← ${name} failed: ${code}: ${preview(first)}`));
      for (const line of rest.slice(0, ERROR_LINES)) this.#line(this.#style.red(`    ${preview(line)}`));
      if (rest.length > ERROR_LINES)
        this.#line(this.#style.red(`    (${rest.length - ERROR_LINES} more lines)`));
    } else {
      this.#line(this.#style.dim(`← ${name}: ${preview(describe(outcome))}`));
    }
  }

  /** Ends the last line. */
  finish(): void {
    this.#newLine();
  }

  #line(text: string): void {
    this.#newLine();
    this.#write(`${text}\n`);
  }

  #newLine(): void {
    if (!this.#atLineStart) this.#write('\n');
  }

  #write(text: string): void {
    if (text === '') return;
    this.#stream.write(text);
    this.#atLineStart = text.endsWith('\n');
  }
}

function describe(outcome: ToolOutcome): string {
  if (outcome.content.length === 0) return '(no output)';
  return outcome.content
    .map((block) => (block.type === 'text' ? block.text : describeBlock(block)))
    .join(' ');
}

function preview(text: string): string {
  return truncate(oneLine(text), PREVIEW_CHARACTERS);
}
