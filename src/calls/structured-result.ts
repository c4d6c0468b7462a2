/**
 * A tool that declares an `outputSchema` promises structured results that match it; MCP clients rely
 * on `structuredContent` matching the schema the tool listed. The host holds it to that: a result
 * that is not structured, or breaks the schema, is the call's `TOOL_BAD_RESULT`.
 *
 * "Structured" is one JSON object: a `structured(...)` result (its `structuredContent`), or a plain
 * object returned as it is (one text block of JSON, not cut). An error result is never checked.
 */
import { errorOutcome, jsonObjectOf, type ToolOutcome } from '../boundary/outcome.js';
import { safeMessage } from '../boundary/sanitize.js';
import { type InputValidator, validateOutput } from '../schema/json-schema.js';

/** The outcome with its structured content checked (and set), or the error it is instead. */
export function checkStructured(outcome: ToolOutcome, validate: InputValidator | undefined): ToolOutcome {
  if (validate === undefined || outcome.isError) return outcome;
  const structured = outcome.structuredContent ?? jsonObjectOf(outcome);
  if (structured === undefined) {
    return errorOutcome(
      'TOOL_BAD_RESULT',
      'the tool declares an outputSchema but returned no structured result (a JSON object, or structured(...))',
    );
  }
  const check = validateOutput(validate, structured);
  if (!check.valid) {
    const message = `the tool's structured result does not match its outputSchema: ${check.errors.join('; ')}`;
    return errorOutcome(
      'TOOL_BAD_RESULT',
      safeMessage(message, 'the result does not match its outputSchema'),
    );
  }
  outcome.structuredContent = structured;
  return outcome;
}
