/**
 * The host's own tools (`host.register`): trusted, in-process, with the same contract, result
 * encoding and timeout as loaded tools. A timeout, the caller's abort or the host closing answers
 * on time and aborts `ctx.signal`; the tool's code itself can't be stopped (it is trusted).
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { encodeResult } from '../boundary/encode-result.js';
import { describeThrown, type ToolErrorCode } from '../boundary/errors.js';
import { type CallSettings, type CallTask, callTmpDir } from '../boundary/protocol.js';
import type { JsonValue, ToolContext } from '../boundary/tool-contract.js';
import type { HostTool } from '../registry/generation.js';
import type { PoolReply } from './worker-pool.js';

export interface InProcessCall {
  settings: CallSettings;
  signal?: AbortSignal | undefined;
  /** Aborts when the host closes. */
  closing: AbortSignal;
  onProgress: (data: JsonValue) => void;
}

export function runInProcess(tool: HostTool, task: CallTask, call: InProcessCall): Promise<PoolReply> {
  const controller = new AbortController();
  const { settings } = call;
  const tmpDir = new LazyTmpDir(callTmpDir(settings, task));
  const ctx = toolContext(task, call, controller.signal, tmpDir);

  return new Promise<PoolReply>((resolve) => {
    let answered = false;
    const answer = (reply: PoolReply) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onCallerAbort);
      call.closing.removeEventListener('abort', onClose);
      resolve(reply);
    };
    const stop = (code: ToolErrorCode, message: string, reason: unknown) => {
      controller.abort(reason);
      answer(failure(code, message));
    };
    const timeoutMessage = `tool timed out after ${task.timeoutMs} ms`;
    const timer = setTimeout(
      () => stop('TOOL_TIMEOUT', timeoutMessage, new DOMException(timeoutMessage, 'TimeoutError')),
      task.timeoutMs,
    );
    const onCallerAbort = () =>
      stop('CALL_ABORTED', 'the call was aborted by its caller', call.signal?.reason);
    const onClose = () => stop('HOST_CLOSED', 'the tool host closed during the call', call.closing.reason);
    if (call.signal?.aborted) return onCallerAbort();
    if (call.closing.aborted) return onClose();
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    call.closing.addEventListener('abort', onClose, { once: true });

    runTool(tool, task, ctx, settings, answer).finally(() => tmpDir.remove());
  });
}

/** The call's `ctx.tmpDir`, made the first time the tool reads it, removed after the call if it was. */
class LazyTmpDir {
  readonly path: string;
  #made = false;

  constructor(path: string) {
    this.path = path;
  }

  /** The folder, made on first use. */
  use(): string {
    if (!this.#made) mkdirSync(this.path, { recursive: true });
    this.#made = true;
    return this.path;
  }

  remove(): void {
    if (this.#made) void rm(this.path, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
  }
}

function toolContext(
  task: CallTask,
  call: InProcessCall,
  signal: AbortSignal,
  tmpDir: LazyTmpDir,
): ToolContext {
  return {
    sessionId: task.sessionId,
    callId: task.callId,
    dataDir: call.settings.dataDir,
    withheld: Object.freeze([...task.withheld]),
    signal,
    emit: call.onProgress,
    get tmpDir() {
      return tmpDir.use();
    },
  };
}

/** Runs the tool a tick later (so a synchronous throw is a rejection) and answers its value or its throw. */
function runTool(
  tool: HostTool,
  task: CallTask,
  ctx: ToolContext,
  settings: CallSettings,
  answer: (reply: PoolReply) => void,
): Promise<void> {
  return Promise.resolve()
    .then(() =>
      task.kind === 'run' ? tool.run(task.args as Record<string, unknown>, ctx) : tool.selftest?.(ctx),
    )
    .then(
      (value) =>
        answer({
          logs: [],
          droppedLogChars: 0,
          progressSent: 0,
          ...encodeResult(value, settings.maxResultBytes),
        }),
      (error: unknown) => answer(failure('TOOL_THREW', describeThrown(error))),
    );
}

function failure(code: ToolErrorCode, message: string): PoolReply {
  return { ok: false, error: { code, message }, logs: [], droppedLogChars: 0, progressSent: 0 };
}
