/** The tool-use loop's public names (re-exported from the package root). */
export { ToolLoopError, type ToolLoopErrorType } from './loop-error.js';
export type { LoopHost, LoopHostCallOptions } from './loop-host.js';
export type { RunToolsOptions } from './loop-options.js';
export type { LoopTool, LoopToolContext, LoopToolResult } from './loop-tool.js';
export type { ToolLoopBody } from './request-body.js';
export type { RetryInfo, RetryOptions } from './retry.js';
export type { BeforeToolCall, ToolCallDecision, ToolCallRequest } from './run-calls.js';
export { runTools, type ToolLoopResult } from './run-tools.js';
export { toRunnableTools } from './runnable-tools.js';
export type { MessagesClient } from './turn.js';
