/**
 * The JSON-RPC message check of the relay channel's every line, written out by hand: it accepts
 * exactly what the SDK's `parseJSONRPCMessage` accepts (its zod schemas: a request, a notification,
 * a result or an error response, each with no key beyond its own), for a tenth of the cost. The SDK's
 * own check ran about five times per `tools/call` in the relay and once more in the hosting process;
 * test/mcp-json-rpc.test.ts holds both to the same answers.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** Which of the four a checked message is. */
export type MessageKind = 'request' | 'notification' | 'result' | 'error';

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/** `value` as a JSON-RPC message, or `undefined` when it is not one. */
export function asJsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  return kindOf(value) === undefined ? undefined : (value as JSONRPCMessage);
}

/** The kind of message `value` is, or `undefined` when it is none of them. */
export function kindOf(value: unknown): MessageKind | undefined {
  if (!isObject(value) || value['jsonrpc'] !== '2.0') return undefined;
  if ('method' in value) {
    if (typeof value['method'] !== 'string' || !paramsHold(value)) return undefined;
    if ('id' in value)
      return isRequestId(value['id']) && onlyKeys(value, REQUEST_KEYS) ? 'request' : undefined;
    return onlyKeys(value, NOTIFICATION_KEYS) ? 'notification' : undefined;
  }
  if ('result' in value) {
    return isRequestId(value['id']) && resultHolds(value['result']) && onlyKeys(value, RESULT_KEYS)
      ? 'result'
      : undefined;
  }
  if ('error' in value) {
    const idHolds = !('id' in value) || isRequestId(value['id']);
    return idHolds && errorHolds(value['error']) && onlyKeys(value, ERROR_KEYS) ? 'error' : undefined;
  }
  return undefined;
}

/** `params`, when present: an object whose `_meta`, when present, is one too, with a valid progress token. */
function paramsHold(message: Record<string, unknown>): boolean {
  if (!('params' in message)) return true;
  const params = message['params'];
  if (!isObject(params)) return false;
  if (!('_meta' in params)) return true;
  const meta = params['_meta'];
  if (!isObject(meta)) return false;
  if ('progressToken' in meta && !isRequestId(meta['progressToken'])) return false;
  if (RELATED_TASK_KEY in meta) {
    const related = meta[RELATED_TASK_KEY];
    if (!isObject(related) || typeof related['taskId'] !== 'string') return false;
  }
  return true;
}

/** A result: an object whose `_meta`, when present, is one too. */
function resultHolds(result: unknown): boolean {
  if (!isObject(result)) return false;
  return !('_meta' in result) || isObject(result['_meta']);
}

/** An error: an integer `code` (a safe one, as zod's `int()`) and a string `message`. */
function errorHolds(error: unknown): boolean {
  return isObject(error) && Number.isSafeInteger(error['code']) && typeof error['message'] === 'string';
}

function isRequestId(id: unknown): boolean {
  return typeof id === 'string' || Number.isSafeInteger(id);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}
