/**
 * The Anthropic SDK's runtime classes, loaded the first time the loop needs one. Importing toolhost
 * loads no SDK code: a host that never runs the loop (a selftest runner, an MCP server) doesn't pay
 * for its few hundred modules. The loop's own code needs only the SDK's error classes, and only
 * inside async paths, where waiting for the import once is free after the first time.
 */
import type { APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';

type SdkErrors = {
  APIConnectionError: typeof APIConnectionError;
  APIUserAbortError: typeof APIUserAbortError;
  ToolError: typeof ToolError;
};

let loading: Promise<SdkErrors> | undefined;

/** The SDK's error classes that the loop throws (so callers can tell them apart as the SDK's own). */
export function sdkErrors(): Promise<SdkErrors> {
  loading ??= Promise.all([
    import('@anthropic-ai/sdk'),
    import('@anthropic-ai/sdk/lib/tools/ToolError'),
  ]).then(([sdk, tools]) => ({
    APIConnectionError: sdk.APIConnectionError,
    APIUserAbortError: sdk.APIUserAbortError,
    ToolError: tools.ToolError,
  }));
  return loading;
}
