/**
 * What an error thrown by the caller's SDK client means, read from what it carries, never from its
 * class. The client may come from the SDK's CommonJS build (what `require` loads) or from another SDK
 * version than toolhost's own: its errors are then of other classes, and `instanceof` against
 * toolhost's import says nothing. What every version carries:
 *
 * - an API error: an integer HTTP `status`, the API's error body in `error` (`{ type: 'error', error:
 *   { type, message } }`; newer versions also copy its type to `type`), and the response `headers`
 *   (a `Headers` in newer versions, a plain object of lower-case names in 0.x before the fetch
 *   rewrite). An `error` event inside a stream has the body and no status.
 * - a connection failure or an abort: no status, and the class's name (set as `name` by newer
 *   versions; older ones leave `name` as `Error`, but their constructors keep the class names).
 */

/** An error the API answered with (or sent as a stream's `error` event). */
export interface ApiErrorFailure {
  kind: 'api';
  /** The HTTP status; `undefined` for a stream's `error` event. */
  status: number | undefined;
  /** The API's error type from the body (`overloaded_error`, …), when it has one. */
  type: string | null;
  /** A response header, by lower-case name. */
  header(name: string): string | undefined;
}

export type ApiFailure =
  | ApiErrorFailure
  | { kind: 'connection' }
  | { kind: 'aborted' }
  /** Something else the SDK threw itself (its base `AnthropicError`), before or without an answer. */
  | { kind: 'client' };

const CONNECTION_ERRORS = new Set(['APIConnectionError', 'APIConnectionTimeoutError']);
const ABORT_ERRORS = new Set(['APIUserAbortError', 'AbortError']);

/** What `error` means, or `undefined` when it is not an error of an Anthropic SDK client. */
export function classifyApiFailure(error: unknown): ApiFailure | undefined {
  if (!isObject(error)) return undefined;
  const names = errorNames(error);
  if (names.some((name) => ABORT_ERRORS.has(name))) return { kind: 'aborted' };

  const status = error['status'];
  const type = errorType(error);
  const headers = error['headers'];
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) {
    return { kind: 'api', status, type, header: headerReader(headers) };
  }
  if (names.some((name) => CONNECTION_ERRORS.has(name))) {
    // SDK 0.x turns a stream's `error` event into a connection error whose message is the event's
    // data: the API's error body.
    const streamed = typeof error['message'] === 'string' ? bodyType(parseJson(error['message'])) : null;
    return streamed === null ? { kind: 'connection' } : apiFailure(undefined, streamed, headers);
  }
  if (status === undefined && type !== null && names.includes('APIError')) {
    return apiFailure(undefined, type, headers);
  }
  if (names.includes('AnthropicError') || names.includes('APIError')) return { kind: 'client' };
  return undefined;
}

function apiFailure(status: number | undefined, type: string | null, headers: unknown): ApiErrorFailure {
  return { kind: 'api', status, type, header: headerReader(headers) };
}

/** `name`, and the names of the classes it was built from (older SDKs set no `name`). */
function errorNames(error: Record<string, unknown>): string[] {
  const names: string[] = [];
  if (typeof error['name'] === 'string') names.push(error['name']);
  for (let proto = Object.getPrototypeOf(error); proto !== null && names.length < 8; ) {
    const made = Object.hasOwn(proto, 'constructor') ? proto.constructor : undefined;
    if (typeof made === 'function' && made.name !== '') names.push(made.name);
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

function errorType(error: Record<string, unknown>): string | null {
  if (typeof error['type'] === 'string') return error['type'];
  return bodyType(error['error']);
}

/** The type of an API error body, `{ type: 'error', error: { type, message } }`. */
function bodyType(body: unknown): string | null {
  if (!isObject(body)) return null;
  const inner = body['error'];
  return isObject(inner) && typeof inner['type'] === 'string' ? inner['type'] : null;
}

function headerReader(headers: unknown): (name: string) => string | undefined {
  if (isObject(headers) && typeof headers['get'] === 'function') {
    const get = headers['get'] as (name: string) => unknown;
    return (name) => {
      const value = get.call(headers, name);
      return typeof value === 'string' ? value : undefined;
    };
  }
  if (isObject(headers)) {
    return (name) => {
      const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
      const value = key === undefined ? undefined : headers[key];
      return typeof value === 'string' ? value : undefined;
    };
  }
  return () => undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
