/**
 * What the lockdown (lockdown.ts) lets through on the ports it guards, each message read once and
 * rebuilt rather than passed on: Node's stdio chunks and fatal-exception report on its internal port,
 * a replacement for a call's reply that is no longer plain data on piscina's task port, and transfer
 * lists copied before they are checked. Like the lockdown, it takes everything it uses now, when the
 * worker imports it, before any tool code runs; nothing here reads or writes through a prototype a
 * tool can still patch.
 */
import * as types from 'node:util/types';

const apply = Reflect.apply;
const defineProperty = Object.defineProperty;
const isArray = Array.isArray;
const SafeTypeError = TypeError;
const isEncoding = Buffer.isEncoding;
const { isProxy, isUint8Array } = types;
const setHas = Set.prototype.has;

/** Whether a set holds a value, through the `has` taken at import. */
export const isIn = (set: Set<object>, value: unknown): boolean => apply(setHas, set, [value]);

/**
 * Sets an array element as an own data property. `array[index] = value` would run a setter a tool
 * put on `Array.prototype[index]` and leave a hole there, which a getter on the prototype then fills
 * with something else (for the serializer, or for a later check).
 */
function setElement(array: unknown[], index: number, value: unknown): void {
  defineProperty(array, index, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * What Node's worker sends on its internal port after start-up: stdio chunks for stdout or stderr.
 * Rebuilt from what was read (once) rather than passed on, so a getter can't show the check one
 * value and the serializer another. Undefined for anything else.
 */
export function stdioPayload(message: unknown): object | undefined {
  if (typeof message !== 'object' || message === null || isProxy(message)) return undefined;
  const { type, stream, chunks } = message as Record<string, unknown>;
  if (type !== 'stdioPayload' || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  if (!isArray(chunks) || isProxy(chunks)) return undefined;
  const rebuilt: Array<{ chunk: string | Uint8Array; encoding: string | undefined }> = [];
  for (let index = 0; index < chunks.length; index++) {
    const item: unknown = chunks[index];
    if (typeof item !== 'object' || item === null || isProxy(item)) return undefined;
    const { chunk, encoding } = item as Record<string, unknown>;
    const known = encoding === undefined || (typeof encoding === 'string' && isEncoding(encoding));
    // The host pushes each chunk into a stream: a string with the encoding 'buffer' (what Node sends
    // beside bytes) makes that push throw, on the host's main thread.
    if (typeof chunk === 'string' ? !known : !isUint8Array(chunk) || !(known || encoding === 'buffer')) {
      return undefined;
    }
    setElement(rebuilt, index, { chunk, encoding });
  }
  return { type, stream, chunks: rebuilt };
}

export function refused(what: string): never {
  throw new SafeTypeError(`toolhost: ${what} is refused inside tool workers`);
}

/**
 * Node's own report of an uncaught exception that nothing handled (`errorMessage`, or
 * `couldNotSerializeError`). Its payload can't be checked here (the host deserializes it, and a
 * forged one throws there), so the host gets the payload-free form, once; after that such reports are
 * dropped. Never a throw: Node posts this from its fatal-exception handler, and a throw there is
 * printed to the process's stderr, past every capture.
 */
let fatalReported = false;
export function fatalReport(message: unknown): object | null | undefined {
  if (typeof message !== 'object' || message === null || isProxy(message)) return undefined;
  const { type } = message as Record<string, unknown>;
  if (type !== 'errorMessage' && type !== 'couldNotSerializeError') return undefined;
  if (fatalReported) return null;
  fatalReported = true;
  return { type: 'couldNotSerializeError' };
}

/**
 * What goes on piscina's task port instead of a reply that is not plain data (the tool changed it
 * after the worker checked it, or answered in toolhost's place): the same task's answer, as a bad
 * result. Anything not shaped like piscina's response is refused.
 */
export function replacedReply(message: unknown, problem: string): object {
  const taskId =
    typeof message === 'object' && message !== null ? (message as { taskId?: unknown }).taskId : undefined;
  if (typeof taskId !== 'number') refused("posting anything but a call's reply on piscina's task port");
  const error = {
    code: 'TOOL_BAD_RESULT',
    message: `the tool's reply changed after it was checked: ${problem}`,
  };
  const result = { ok: false, error, logs: [], droppedLogChars: 0, progressSent: 0 };
  return { taskId, result, error: null, time: null };
}

/**
 * A transfer list (an array, or `{ transfer }`) copied once, or undefined when there is none; the copy
 * is what is checked and what the native call gets, so a getter can't swap a port in afterwards.
 */
export function transferList(transfer: unknown): unknown[] | undefined {
  const list = isArray(transfer)
    ? transfer
    : typeof transfer === 'object' && transfer !== null
      ? (transfer as { transfer?: unknown }).transfer
      : undefined;
  if (list === undefined) return undefined;
  if (!isArray(list) || isProxy(list)) refused('a transfer list that is not a plain array');
  const copy: unknown[] = [];
  for (let index = 0; index < list.length; index++) setElement(copy, index, list[index]);
  return copy;
}

export function checkTransfers(list: unknown[] | undefined, protectedPorts: Set<object>): void {
  if (list === undefined) return;
  // An index loop: `for...of` would ask `Array.prototype[Symbol.iterator]`, which a tool can replace.
  for (let index = 0; index < list.length; index++) {
    if (isIn(protectedPorts, list[index])) refused("transferring the worker's ports to the host");
  }
}
