/**
 * toolhost: host untrusted LLM tools safely. The whole public API, as explicit named exports.
 */
export type { ToolInfo } from './declaration.js';
export { DEFAULT_TOOL_TIMEOUT_MS, TOOL_NAME_PATTERN } from './declaration.js';
export type { HostErrorCode, LeftOutCode, ToolErrorCode } from './errors.js';
export { ToolHostError } from './errors.js';
export type {
  LoadReport,
  ModuleEvent,
  SelftestReport,
  ToolHostEvents,
  ToolOutputEvent,
  ToolProgressEvent,
} from './host-events.js';
export type { CallOptions, LoadOptions, Logger, SelftestOptions, ToolHostOptions } from './host-options.js';
export type { IsolationTier } from './isolation.js';
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
export type { ToolOutcome } from './outcome.js';
export { outcomeText } from './outcome.js';
export type { CapturedLog } from './protocol.js';
export type { HostTool, ModuleStatus } from './registry.js';
export type { Clock } from './reread-schedule.js';
export { DEFAULT_REREAD_DELAYS_MS, systemClock } from './reread-schedule.js';
export type { SourceRefresh, ToolSource, ToolSourceHandle, WatchOptions } from './sources.js';
export { ToolHost } from './tool-host.js';
export type {
  Declared,
  ImageContentBlock,
  ImageMediaType,
  InferSchema,
  JsonObject,
  JsonSchema,
  JsonSchemaValue,
  JsonValue,
  ParameterSchema,
  TaggedResult,
  TextContentBlock,
  ToolConcurrency,
  ToolContentBlock,
  ToolContext,
  ToolDefinition,
  ToolModule,
} from './tool-module.js';
export {
  defineTool,
  errorResult,
  image,
  isTaggedResult,
  RESULT_TAG,
  text,
  toolResult,
  withDetails,
} from './tool-module.js';
