/**
 * toolhost: host untrusted LLM tools safely. The whole public API, as explicit named exports.
 */

export type { HostErrorCode, LeftOutCode, ToolErrorCode } from './boundary/errors.js';
export { ToolHostError } from './boundary/errors.js';
export type { ToolOutcome } from './boundary/outcome.js';
export { outcomeText } from './boundary/outcome.js';
export type {
  AudioContentBlock,
  AudioMediaType,
  Declared,
  ImageContentBlock,
  ImageMediaType,
  InferSchema,
  JsonObject,
  JsonSchema,
  JsonSchemaValue,
  JsonValue,
  ParameterSchema,
  ResourceContentBlock,
  ResourceContents,
  ResourceLinkContentBlock,
  TextContentBlock,
  ToolAnnotations,
  ToolConcurrency,
  ToolContentBlock,
  ToolContext,
  ToolDefinition,
  ToolModule,
} from './boundary/tool-contract.js';
export type { IsolationTier } from './calls/isolation.js';
export type { ToolInfo } from './declaration/check.js';
export { DEFAULT_TOOL_TIMEOUT_MS, TOOL_NAME_PATTERN } from './declaration/check.js';
export type { CallOptions } from './host/call-options.js';
export type {
  LoadReport,
  ModuleEvent,
  SelftestReport,
  ToolHostEvents,
  ToolOutputEvent,
  ToolProgressEvent,
  WorkerBudgetEvent,
} from './host/events.js';
export type {
  LoadOptions,
  PinOptions,
  SelftestOptions,
  ToolHostOptions,
} from './host/options.js';
export { ToolHost } from './host/tool-host.js';
export type { LockDifference } from './lock/difference.js';
export type { LockEntry } from './lock/lock-file.js';
export { DEFAULT_LOCK_FILE_NAME, LOCK_FORMAT } from './lock/lock-file.js';
export type { PinChange, PinReport } from './lock/pin.js';
export { ToolLoopError, type ToolLoopErrorType } from './loop/loop-error.js';
export type { LoopHost, LoopHostCallOptions } from './loop/loop-host.js';
export type { RunToolsOptions } from './loop/loop-options.js';
export type { LoopTool, LoopToolContext, LoopToolResult } from './loop/loop-tool.js';
export type { ToolLoopBody } from './loop/request-body.js';
export type { RetryInfo, RetryOptions } from './loop/retry.js';
export type { BeforeToolCall, ToolCallDecision, ToolCallRequest } from './loop/run-calls.js';
export { runTools } from './loop/run-entry.js';
export type { ToolLoopResult } from './loop/run-tools.js';
export { toRunnableTools } from './loop/runnable-tools.js';
export type { MessagesClient } from './loop/turn.js';
export type { NetworkEvent } from './process/network/egress.js';
export type { NetworkAllowance } from './process/network/grant.js';
export type { HostTool, ModuleState, ModuleStatus } from './registry/generation.js';
export type { Logger } from './shared/logger.js';
export type { SourceRefresh, ToolSource, ToolSourceHandle, WatchOptions } from './sources/watched-sources.js';
export type { TaggedResult } from './tool-module.js';
export {
  audio,
  defineTool,
  errorResult,
  image,
  isTaggedResult,
  RESULT_TAG,
  resource,
  resourceLink,
  structured,
  text,
  toolResult,
  withDetails,
} from './tool-module.js';
