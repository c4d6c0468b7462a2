/**
 * What a call answers: {@link ToolOutcome}. Output over the budget is cut head + tail for the model
 * and kept whole under `dataDir`, so the host (or a paging tool) can still read all of it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type JsonObject, type JsonValue, type ToolContentBlock, text } from '../tool-module.js';
import { cutHeadTail } from './encode-result.js';
import type { ToolErrorCode } from './errors.js';

/** The result of one call. A tool's fault is an outcome with `isError`, never a rejection. */
export interface ToolOutcome {
  /** What the model sees (text, image, audio and resource blocks). Empty when the tool returned nothing. */
  content: ToolContentBlock[];
  isError: boolean;
  /** Data for the host's screens, beside the output; never sent to the model. */
  details?: JsonValue;
  /**
   * A structured result's JSON object: what the tool's `outputSchema` was checked against, and what
   * MCP clients get as `structuredContent`. Set for a `structured(...)` result, and for a plain
   * object result of a tool that declares an `outputSchema`.
   */
  structuredContent?: JsonObject;
  /**
   * Why the call failed, when it did. `stack`: where, for the host only (the tool's own frames, paths
   * relative to its package; never sent to the model unless the host's `errorStacksToModel` says so).
   */
  error?: { code: ToolErrorCode; message: string; stack?: string };
  /** Where the whole output was written when it was cut for the model. */
  fullOutputPath?: string;
}

/** An error outcome whose text (what the model sees) is `message`. */
export function errorOutcome(code: ToolErrorCode, message: string, stack?: string): ToolOutcome {
  const error = stack === undefined ? { code, message } : { code, message, stack };
  return { content: [text(message)], isError: true, error };
}

/** The text blocks of an outcome, joined: what a person or a log line wants to see. */
export function outcomeText(outcome: ToolOutcome): string {
  return outcome.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

export interface BudgetOptions {
  outputBudgetBytes: number;
  dataDir: string;
  /** A file name for the full output (unique per call, safe for a path). */
  artifactName: string;
}

/** What a successful encoding gives an outcome. */
export interface EncodedOutput {
  content: ToolContentBlock[];
  isError: boolean;
  details?: JsonValue;
  structuredContent?: JsonObject;
  cutBytes: number;
}

/**
 * The outcome of a successful encoding whose text is clearly within the budget (at most a third of
 * it in UTF-16 units, so at most the budget in UTF-8), built at once; undefined when the text may be
 * over and {@link successOutcome} has to measure it. Most results are small: they skip the joined
 * copy of their text, the artifact's name and a promise.
 */
export function outcomeWithinBudget(
  encoded: EncodedOutput,
  outputBudgetBytes: number,
): ToolOutcome | undefined {
  const { content } = encoded;
  let units = 0;
  for (let index = 0; index < content.length; index++) {
    const block = content[index] as ToolContentBlock;
    // Joined with a newline between texts, as successOutcome joins them.
    if (block.type === 'text') units += block.text.length + 1;
  }
  if (units > outputBudgetBytes / 3) return undefined;
  return outcomeOf(encoded, content, undefined);
}

/** Builds the outcome of a successful encoding, cutting text over the budget. */
export async function successOutcome(encoded: EncodedOutput, budget: BudgetOptions): Promise<ToolOutcome> {
  let content = encoded.content;
  let fullOutputPath: string | undefined;
  const texts = content.filter((block) => block.type === 'text').map((block) => block.text);
  const joined = texts.join('\n');
  if (joined.length > budget.outputBudgetBytes / 3 && Buffer.byteLength(joined) > budget.outputBudgetBytes) {
    const directory = join(budget.dataDir, 'outputs');
    fullOutputPath = join(directory, `${budget.artifactName}.txt`);
    await mkdir(directory, { recursive: true });
    await writeFile(fullOutputPath, joined);
    const cut = cutHeadTail(joined, budget.outputBudgetBytes, fullOutputPath);
    content = [text(cut.text), ...content.filter((block) => block.type !== 'text')];
  }
  return outcomeOf(encoded, content, fullOutputPath);
}

function outcomeOf(
  encoded: EncodedOutput,
  content: ToolContentBlock[],
  fullOutputPath: string | undefined,
): ToolOutcome {
  const outcome: ToolOutcome = { content, isError: encoded.isError };
  if (encoded.details !== undefined) outcome.details = encoded.details;
  if (encoded.structuredContent !== undefined) outcome.structuredContent = encoded.structuredContent;
  if (fullOutputPath !== undefined) outcome.fullOutputPath = fullOutputPath;
  if (encoded.isError) outcome.error = { code: 'TOOL_ERROR_RESULT', message: outcomeText(outcome) };
  return outcome;
}

/**
 * The JSON object a one-text-block outcome holds (a plain object the tool returned), if it holds one:
 * what becomes `structuredContent`. A cut output holds none.
 */
export function jsonObjectOf(outcome: ToolOutcome): JsonObject | undefined {
  const [block, ...rest] = outcome.content;
  if (block?.type !== 'text' || rest.length > 0 || outcome.fullOutputPath !== undefined) return undefined;
  // Cheap test first: most text results are prose, and parsing them all would cost every call.
  if (!block.text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(block.text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}
