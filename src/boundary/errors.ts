/**
 * Error codes and classes. A tool's fault never throws out of the host: it becomes a
 * {@link ToolOutcome} with `error.code` set to one of {@link ToolErrorCode}. Only host-level mistakes
 * (bad options, a missing path, calling a closed host) throw a {@link ToolHostError}.
 */

/** Why a call ended in an error result. Every code is documented in docs/error-codes.md. */
export type ToolErrorCode =
  | 'TOOL_THREW'
  | 'TOOL_ACCESS_DENIED'
  | 'TOOL_ERROR_RESULT'
  | 'TOOL_TIMEOUT'
  | 'TOOL_EXITED'
  | 'TOOL_OUT_OF_MEMORY'
  | 'TOOL_STACK_OVERFLOW'
  | 'TOOL_CRASHED'
  | 'TOOL_UNHANDLED_REJECTION'
  | 'TOOL_BAD_RESULT'
  | 'TOOL_LOAD_FAILED'
  | 'INVALID_INPUT'
  | 'INVALID_INPUT_JSON'
  | 'UNKNOWN_TOOL'
  | 'CALL_BLOCKED'
  | 'CALL_ABORTED'
  | 'HOST_CLOSED';

/** Why a tool module is left out of what is offered. */
export type LeftOutCode =
  | 'SOURCE_UNREADABLE'
  | 'MODULE_NOT_FOUND'
  | 'MODULE_OUTSIDE_PACKAGE'
  | 'IMPORT_FAILED'
  | 'DECLARATION_THREW'
  | 'DECLARATION_INVALID'
  | 'DECLARATION_NOT_PLAIN'
  | 'DECLARATION_TIMEOUT'
  | 'DECLARATION_OUT_OF_MEMORY'
  | 'DECLARATION_EXITED'
  | 'DECLARATION_CRASHED'
  | 'NAME_TAKEN'
  /**
   * The package binds secrets this host can't keep from it: a thread tier (without
   * `exposeSecretValuesToThreadTiers`), or a bound host its network grant does not reach.
   */
  | 'SECRETS_REFUSED'
  /** Under a lock: the module has no entry in it. */
  | 'NOT_PINNED'
  /** Under a lock: what the model reads differs from what was pinned. */
  | 'DECLARATION_CHANGED'
  /** Under a lock: the declaration is as pinned, the package's content is not. */
  | 'CODE_CHANGED'
  /** An MCP server this host can't run as its config asks (remote, disabled, no bubblewrap, `net`). */
  | 'SERVER_UNSUPPORTED'
  /** An MCP server that could not be started, failed its `initialize` or `tools/list`, or keeps dying. */
  | 'SERVER_FAILED';

/** Host-level failures: a caller's mistake or a host that can't do what was asked. */
export type HostErrorCode =
  | 'INVALID_OPTION'
  | 'PATH_NOT_FOUND'
  | 'NOT_A_PACKAGE'
  | 'NAME_TAKEN'
  | 'HOST_CLOSED'
  | 'UNKNOWN_TOOL'
  | 'TOOL_LOOP_FAILED';

/**
 * Every error toolhost throws. `code` is stable; `message` is for people. The loop's
 * `ToolLoopError` is one too (code `TOOL_LOOP_FAILED`, with its own `type` and `messages`).
 */
export class ToolHostError extends Error {
  override name = 'ToolHostError';
  readonly code: HostErrorCode;

  constructor(code: HostErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Renders a thrown value readably: `throw null` or `throw {}` never turns into silence. Reading a
 * thrown value may run the tool's code (a getter on `message`), so this never throws itself.
 */
export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error) {
      const message = value.message;
      return typeof message === 'string' && message !== '' ? message : String(value.name);
    }
    if (value === null) return 'the tool threw null';
    if (value === undefined) return 'the tool threw undefined';
    if (typeof value === 'string') return value === '' ? 'the tool threw an empty string' : value;
    if (typeof value === 'object') return `the tool threw ${JSON.stringify(value)}`;
    return `the tool threw ${String(value)}`;
  } catch {
    return "the tool threw something that can't be shown";
  }
}
