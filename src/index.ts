/**
 * toolhost: host untrusted LLM tools safely. The whole public API, as explicit named exports.
 */

export type { HostErrorCode, LeftOutCode, ToolErrorCode } from './boundary/errors.js';
export { ToolHostError } from './boundary/errors.js';
export type { ToolOutcome } from './boundary/outcome.js';
export { outcomeText } from './boundary/outcome.js';
export type { CapturedLog } from './boundary/protocol.js';
export type { IsolationTier } from './calls/isolation.js';
export type { ToolInfo } from './declaration/check.js';
export { DEFAULT_TOOL_TIMEOUT_MS, TOOL_NAME_PATTERN } from './declaration/check.js';
export type { CallOptions } from './host/call-options.js';
export type {
  LoadReport,
  ModuleEvent,
  NetworkEvent,
  SelftestReport,
  ToolHostEvents,
  ToolOutputEvent,
  ToolProgressEvent,
} from './host/events.js';
export type { NetworkTestingOptions } from './host/network-options.js';
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
export type {
  BeforeToolCall,
  LoopHost,
  LoopHostCallOptions,
  LoopTool,
  LoopToolContext,
  LoopToolResult,
  MessagesClient,
  RetryInfo,
  RetryOptions,
  RunToolsOptions,
  ToolCallDecision,
  ToolCallRequest,
  ToolLoopBody,
  ToolLoopErrorType,
  ToolLoopResult,
} from './loop/index.js';
export { runTools, ToolLoopError, toRunnableTools } from './loop/index.js';
export type { NetworkAllowance } from './process/network/grant.js';
export type { HostTool, ModuleStatus } from './registry/generation.js';
export type { Clock } from './registry/reread-schedule.js';
export { DEFAULT_REREAD_DELAYS_MS, systemClock } from './registry/reread-schedule.js';
export type { Logger } from './shared/logger.js';
export type { SourceRefresh, ToolSource, ToolSourceHandle, WatchOptions } from './sources/watched-sources.js';
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
  TaggedResult,
  TextContentBlock,
  ToolAnnotations,
  ToolConcurrency,
  ToolContentBlock,
  ToolContext,
  ToolDefinition,
  ToolModule,
} from './tool-module.js';
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
