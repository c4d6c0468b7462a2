/**
 * Type tests for the public API (checked by `npm run typecheck`, which compiles test/).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type Anthropic039 from 'anthropic-sdk-0.39';
import { expectTypeOf } from 'vitest';
import {
  audio,
  errorResult,
  image,
  type LoadReport,
  type ModuleState,
  type ModuleStatus,
  type RunToolsOptions,
  resource,
  resourceLink,
  runTools,
  type SelftestReport,
  structured,
  type TaggedResult,
  type ToolHost,
  type ToolHostError,
  type ToolHostOptions,
  type ToolInfo,
  type ToolLoopError,
  type ToolLoopResult,
  type ToolOutcome,
  toolResult,
  withDetails,
} from '../dist/src/index.js';

declare const host: ToolHost;
declare const client: Anthropic;
declare const olderClient: Anthropic039;

// The host: calls resolve to outcomes (never a rejection type to handle), loads to reports.
expectTypeOf(host.call('weather', { city: 'Oslo' })).toEqualTypeOf<Promise<ToolOutcome>>();
expectTypeOf(host.load('./tools')).toEqualTypeOf<Promise<LoadReport>>();
expectTypeOf(host.list()).toEqualTypeOf<ToolInfo[]>();
expectTypeOf(host.status()).toEqualTypeOf<ModuleStatus[]>();
expectTypeOf(host.selftest()).toEqualTypeOf<Promise<SelftestReport[]>>();
expectTypeOf(host.toAnthropicTools()).toEqualTypeOf<Tool[]>();
expectTypeOf<ToolOutcome['error']>().toEqualTypeOf<
  { code: import('../dist/src/index.js').ToolErrorCode; message: string; stack?: string } | undefined
>();
expectTypeOf<ModuleStatus['state']>().toEqualTypeOf<ModuleState>();
expectTypeOf<ModuleState>().toEqualTypeOf<'offered' | 'left-out' | 'reread-pending'>();

// Events are typed by name, and say a tool's name as reports do (`name`).
host.on('progress', (event) => expectTypeOf(event.name).toBeString());
host.on('output', (event) => {
  expectTypeOf(event.name).toBeString();
  expectTypeOf(event.droppedChars).toBeNumber();
});
expectTypeOf<SelftestReport['name']>().toBeString();
// A module event's type is the state the module is now in (one union with status()), or `removed`.
host.on('module', (event) => {
  expectTypeOf(event.type).toEqualTypeOf<ModuleState | 'removed'>();
  expectTypeOf(event.reread).toBeBoolean();
});

// Options: a count of things at once is `max…`; the tool's mode is `concurrency`.
expectTypeOf<ToolHostOptions['maxConcurrentSelftests']>().toEqualTypeOf<number | undefined>();
expectTypeOf<ToolInfo['concurrency']>().toEqualTypeOf<'parallel' | 'exclusive'>();
expectTypeOf<RunToolsOptions['maxConcurrency']>().toEqualTypeOf<number | undefined>();
expectTypeOf<ToolHostOptions['tempRoot']>().toEqualTypeOf<string | undefined>();
expectTypeOf<ToolHostOptions['maxLogChars']>().toEqualTypeOf<number | undefined>();
// @ts-expect-error: the host's temp folder option is not named like ctx.tmpDir
expectTypeOf<ToolHostOptions['tmpDir']>();

// Test seams and protocol types are not part of the root export.
// @ts-expect-error: the re-read clock is imported by path in tests
type _Clock = import('../dist/src/index.js').Clock;
// @ts-expect-error: captured output's entry type is the protocol's
type _CapturedLog = import('../dist/src/index.js').CapturedLog;

// The loop: the conversation comes back as MessageParam[], and its error carries it too.
expectTypeOf(runTools(client, 'hello', { host, model: 'claude-test' })).toEqualTypeOf<
  Promise<ToolLoopResult>
>();
expectTypeOf<ToolLoopResult['messages']>().toEqualTypeOf<MessageParam[]>();
// A client of another SDK version (an app pins its own) fits as it is.
expectTypeOf(runTools(olderClient, 'hello', { host, model: 'claude-test' })).toEqualTypeOf<
  Promise<ToolLoopResult>
>();
// @ts-expect-error: something without messages.create is no client
runTools({ messages: {} }, 'hello', { host, model: 'claude-test' });
expectTypeOf<ToolLoopError>().toMatchTypeOf<ToolHostError>();
expectTypeOf<ToolLoopError['messages']>().toEqualTypeOf<MessageParam[]>();

// Author helpers build tagged, plain results.
expectTypeOf(withDetails('3 words', { words: 3 })).toEqualTypeOf<TaggedResult>();
expectTypeOf(errorResult('not found')).toEqualTypeOf<TaggedResult>();
expectTypeOf(toolResult([image(new Uint8Array(), 'image/png')])).toEqualTypeOf<TaggedResult>();
// @ts-expect-error: only the media types the Messages API accepts
image(new Uint8Array(), 'image/bmp');
expectTypeOf(
  toolResult([
    audio(new Uint8Array(), 'audio/wav'),
    resource('file:///a.md', '# a'),
    resourceLink('https://x.test/a', 'a'),
  ]),
).toEqualTypeOf<TaggedResult>();
// @ts-expect-error: only the audio media types toolhost checks
audio(new Uint8Array(), 'audio/x-midi');
expectTypeOf(structured({ celsius: 20 })).toEqualTypeOf<TaggedResult>();
// @ts-expect-error: a structured result is one JSON object
structured([1, 2]);
expectTypeOf<ToolInfo['annotations']>().toEqualTypeOf<
  | { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean }
  | undefined
>();
