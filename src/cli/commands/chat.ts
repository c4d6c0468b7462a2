/**
 * `toolhost chat [--tools <package-or-module>]... [--model M] <prompt>`: one conversation with Claude
 * over the tools of the given packages, through `runTools`. The model's text streams to stdout as it
 * arrives, with a line per tool call and outcome. Needs ANTHROPIC_API_KEY; honours ANTHROPIC_BASE_URL.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ToolOutcome } from '../../boundary/outcome.js';
import type { ToolHost } from '../../host/tool-host.js';
import { ToolLoopError } from '../../loop/loop-error.js';
import type { LoopHost } from '../../loop/loop-host.js';
import { runTools } from '../../loop/run-tools.js';
import type { ChatArgs } from '../args/command-line.js';
import { DEFAULT_CHAT_MODEL } from '../args/flags.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { ChatDisplay } from '../ui/chat-display.js';
import { chatFailureLines } from '../ui/chat-failure.js';
import { messages, writeMessage } from '../ui/messages.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { createHost, loadAll } from './host-setup.js';

/** The `--json` document. */
export type ChatJson =
  | { ok: true; response: Message; messages: MessageParam[]; toolCalls: ChatToolCall[] }
  | {
      ok: false;
      error: { type: string; message: string };
      messages: MessageParam[];
      toolCalls: ChatToolCall[];
    };

export interface ChatToolCall {
  id: string | null;
  name: string;
  input: unknown;
  outcome: ToolOutcome;
}

export async function chatCommand(args: ChatArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const apiKey = io.env['ANTHROPIC_API_KEY'];
  if (apiKey === undefined || apiKey === '') throw new UsageError(messages.chatNeedsKey());
  const model = args.model ?? nonEmpty(io.env['ANTHROPIC_MODEL']) ?? DEFAULT_CHAT_MODEL;
  const baseURL = nonEmpty(io.env['ANTHROPIC_BASE_URL']);
  const style = styleFor(io.stdout, io.env);

  const host = await createHost(args, io.stderr);
  try {
    await loadAll(
      host,
      args.toolPaths.map((path) => ({ shown: path, path })),
    );
    reportLeftOut(host, io);
    const display = args.json ? undefined : new ChatDisplay(io.stdout, style);
    const toolCalls: ChatToolCall[] = [];
    const shownHost = showingHost(host, toolCalls, display);
    if (!args.json) {
      host.on('output', (event) => {
        for (const log of event.logs)
          io.stderr.write(style.dim(`│ ${event.name}: ${log.text.replace(/\n$/, '')}\n`));
      });
    }

    const client = new Anthropic({ apiKey, ...(baseURL === undefined ? {} : { baseURL }) });
    const chat: Chat = { args, io, style, display, toolCalls };
    try {
      const { response, messages } = await runTools(client, args.prompt, {
        host: shownHost,
        model,
        signal,
        ...(display === undefined ? {} : { onEvent: (event) => display.onEvent(event) }),
        ...(args.maxTokens === undefined ? {} : { maxTokens: args.maxTokens }),
        ...(args.maxIterations === undefined ? {} : { maxIterations: args.maxIterations }),
        ...(args.timeoutMs === undefined ? {} : { toolTimeoutMs: args.timeoutMs }),
      });
      reportAnswer(chat, response, messages);
      return ExitCode.ok;
    } catch (error) {
      if (!(error instanceof ToolLoopError)) throw error;
      return reportLoopFailure(chat, error, signal);
    }
  } finally {
    await host.close();
  }
}

/** What the reports of one conversation write to, and what they report. */
interface Chat {
  args: ChatArgs;
  io: CliIo;
  style: Style;
  display: ChatDisplay | undefined;
  toolCalls: ChatToolCall[];
}

/** One line on stderr for each module that is not offered. */
function reportLeftOut(host: ToolHost, io: CliIo): void {
  for (const status of host.status()) {
    if (status.state === 'offered') continue;
    writeMessage(
      io.stderr,
      messages.moduleLeftOut(status.path, status.code ?? 'LEFT_OUT', oneLine(status.reason ?? '')),
    );
  }
}

/** The loop drives the host through this view of it, so each outcome is kept and shown as it comes. */
function showingHost(host: ToolHost, toolCalls: ChatToolCall[], display: ChatDisplay | undefined): LoopHost {
  return {
    list: () => host.list(),
    call: async (name, input, options) => {
      const outcome = await host.call(name, input, options);
      toolCalls.push({ id: options?.callId ?? null, name, input, outcome });
      display?.toolFinished(name, outcome);
      return outcome;
    },
  };
}

/** The model's last answer: the `--json` document, or the end of the streamed text and why it stopped. */
function reportAnswer(chat: Chat, response: Message, messages: MessageParam[]): void {
  const { args, io, style, display, toolCalls } = chat;
  if (args.json) {
    const document: ChatJson = { ok: true, response, messages, toolCalls };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else {
    display?.finish();
    if (response.stop_reason !== 'end_turn' && response.stop_reason !== 'stop_sequence') {
      io.stderr.write(style.dim(`(the model stopped: ${response.stop_reason})\n`));
    }
  }
}

/** A loop that ended without an answer: interrupted by the user, or failed (as `--json` or as lines). */
function reportLoopFailure(chat: Chat, error: ToolLoopError, signal: AbortSignal): ExitCode {
  const { args, io, display, toolCalls } = chat;
  display?.finish();
  if (error.type === 'aborted' && signal.aborted) {
    writeMessage(io.stderr, messages.chatInterrupted());
    return ExitCode.interrupted;
  }
  if (args.json) {
    const document: ChatJson = {
      ok: false,
      error: { type: error.type, message: error.message },
      messages: error.messages,
      toolCalls,
    };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else {
    const [first = '', ...rest] = chatFailureLines(error);
    writeMessage(io.stderr, first, rest);
  }
  return ExitCode.failed;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
