/**
 * Replies this worker built itself, so that the guard on piscina's task port can let them cross
 * without walking them again (workers/guard/lockdown.ts walks everything else it is handed there).
 *
 * A reply is sealed only when every object in it was made by this worker from values it checked:
 * the reply, its content blocks (encodeResult builds them afresh), its error, and a copy of the
 * captured output (the call's own log list is reachable by tool code: it can import the module
 * that holds the active call). A reply that carries the tool's own objects (`details`,
 * `structuredContent`) is not sealed: the tool may change those until the moment the reply is
 * posted, so the guard walks it as before. Sealed replies are frozen to the last object, so a tool
 * that gets hold of one (by calling this worker's handler itself, say) can't change it into
 * something the host could not read; they hold nothing but strings, numbers, booleans and such
 * frozen objects, and their size was bounded as they were built.
 *
 * Every seal is a closure over its own last reply: a tool that imports this module and makes a
 * seal of its own gets one the guard never consults.
 */
import * as types from 'node:util/types';
import type { CallReply, CapturedLog } from '../../src/boundary/protocol.js';
import type { ToolContentBlock } from '../../src/boundary/tool-contract.js';

// Taken when this module loads, before any tool code runs.
const freeze = Object.freeze;
const isProxy = types.isProxy;
const isArray = Array.isArray;
const getPrototypeOf = Object.getPrototypeOf;
const ownNames = Object.getOwnPropertyNames;
const ownSymbols = Object.getOwnPropertySymbols;
const getOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const hasOwn = Object.hasOwn;
const objectPrototype = Object.prototype;
const defineProperty = Object.defineProperty;

export interface ReplySeal {
  /**
   * Freezes `reply` and remembers it as this worker's own; returns it (or an unsealed one as it
   * was). The common reply (see {@link compactText}) becomes its text alone.
   */
  seal(reply: CallReply): CallReply | string;
  /**
   * Whether `message` is piscina's response around a sealed reply (or around no reply at all, the
   * answer to a wake task), with nothing else in it: `{ taskId, result, error: null, time }`.
   */
  vouchesFor(message: unknown): boolean;
}

export interface SealLimits {
  /** The most characters of captured output a reply may carry (more was not captured by this worker). */
  maxLogChars: number;
  /** The most a sealed reply's strings may hold, at three bytes a character; a larger one is walked. */
  maxReplyBytes: number;
}

export function replySeal(limits: SealLimits): ReplySeal {
  // The last reply sealed: the one piscina is about to post (a reply sealed meanwhile, by a tool
  // that calls this worker's handler itself, takes its place, and the one posted is walked).
  let last: CallReply | undefined;
  return {
    seal(reply) {
      const text = compactText(reply);
      if (text !== undefined) {
        // No sealed object is about to be posted: none may be vouched for.
        last = undefined;
        return text;
      }
      if (hasOwn(reply, 'details') || hasOwn(reply, 'structuredContent')) return reply;
      const logs = copyLogs(reply.logs, limits.maxLogChars);
      if (logs === undefined) return reply;
      let characters = logs.characters;
      if (reply.ok) {
        const { content } = reply;
        for (let index = 0; index < content.length; index++) {
          characters += freezeBlock(content[index] as ToolContentBlock);
        }
        freeze(content);
      } else {
        characters += reply.error.message.length + (reply.error.stack?.length ?? 0);
        freeze(reply.error);
      }
      if (3 * characters > limits.maxReplyBytes) return reply;
      // An own data property of the worker's own literal: assigning it asks no setter, and keeps the
      // reply in fast mode (defining it would not, which costs the freeze and the serializer).
      reply.logs = logs.entries as CapturedLog[];
      freeze(reply);
      last = reply;
      return reply;
    },
    vouchesFor(message) {
      if (typeof message !== 'object' || message === null || isProxy(message)) return false;
      if (getPrototypeOf(message) !== objectPrototype) return false;
      if (ownSymbols(message).length !== 0 || ownNames(message).length !== 4) return false;
      const taskId = dataOf(message, 'taskId');
      const result = dataOf(message, 'result');
      const error = dataOf(message, 'error');
      const time = dataOf(message, 'time');
      if (taskId === undefined || result === undefined || error === undefined || time === undefined) {
        return false;
      }
      if (typeof taskId.value !== 'number' || error.value !== null) return false;
      if (time.value !== null && typeof time.value !== 'number') return false;
      // A string holds nothing but its text: one the worker could have built (encodeResult bounds
      // it to maxResultBytes, far below this) passes; a larger, forged one is walked and replaced.
      if (typeof result.value === 'string') return 2 * result.value.length <= limits.maxReplyBytes;
      return result.value === null || (last !== undefined && result.value === last);
    },
  };
}

/**
 * The text of the common reply, which crosses as a plain string (cloning one costs about a third
 * of cloning the reply object, and the host builds the rest): a success of one text block, not
 * cut, with no details, structured content, output, dropped output, progress or forwarded logs.
 * Undefined for any other reply. Read from the worker's own literal, built by call-runner.
 */
export function compactText(reply: CallReply): string | undefined {
  if (!reply.ok || reply.isError || reply.cutBytes !== 0 || reply.content.length !== 1) return undefined;
  if (reply.logs.length !== 0 || reply.droppedLogChars !== 0 || reply.progressSent !== 0) return undefined;
  if ((reply.logNotesSent ?? 0) !== 0 || hasOwn(reply, 'details') || hasOwn(reply, 'structuredContent'))
    return undefined;
  const block = reply.content[0] as ToolContentBlock;
  if (block.type !== 'text' || ownNames(block).length !== 2) return undefined;
  return typeof block.text === 'string' ? block.text : undefined;
}

/** An own data property's descriptor, or undefined (an accessor, or no such property). */
function dataOf(object: object, key: string): PropertyDescriptor | undefined {
  const descriptor = getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && hasOwn(descriptor, 'value') ? descriptor : undefined;
}

/**
 * The captured output as fresh frozen entries, with the characters they hold; undefined when it is
 * not what the capture makes (tool code can reach the call's list and put anything in it) or holds
 * more than the capture keeps. Read through own data properties only, with an index loop: no getter
 * runs and nothing a tool patched is asked.
 */
function copyLogs(
  logs: unknown,
  maxLogChars: number,
): { entries: readonly CapturedLog[]; characters: number } | undefined {
  if (!isArray(logs) || isProxy(logs) || logs.length > maxLogChars + 1) return undefined;
  const entries: CapturedLog[] = [];
  let characters = 0;
  for (let index = 0; index < logs.length; index++) {
    const entry = dataOf(logs, `${index}`)?.value as unknown;
    if (typeof entry !== 'object' || entry === null || isProxy(entry)) return undefined;
    const stream = dataOf(entry, 'stream')?.value as unknown;
    const text = dataOf(entry, 'text')?.value as unknown;
    if ((stream !== 'stdout' && stream !== 'stderr') || typeof text !== 'string') return undefined;
    characters += text.length;
    if (characters > maxLogChars) return undefined;
    defineProperty(entries, index, {
      value: freeze({ stream, text }),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return { entries: freeze(entries), characters };
}

/**
 * Freezes a content block as encodeResult built it (the block and the one object it may nest), and
 * says how many characters its strings hold.
 */
function freezeBlock(block: ToolContentBlock): number {
  switch (block.type) {
    case 'text':
      freeze(block);
      return block.text.length;
    case 'image':
    case 'audio':
      freeze(block.source);
      freeze(block);
      return block.source.data.length + block.source.media_type.length;
    case 'resource': {
      const { resource } = block;
      freeze(resource);
      freeze(block);
      const body = 'text' in resource ? resource.text : resource.blob;
      return body.length + resource.uri.length + (resource.mimeType?.length ?? 0);
    }
    case 'resource_link':
      freeze(block);
      return (
        block.uri.length +
        block.name.length +
        (block.title?.length ?? 0) +
        (block.description?.length ?? 0) +
        (block.mimeType?.length ?? 0)
      );
  }
}
