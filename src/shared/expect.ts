/**
 * Option checks, run when an object is built, each mistake one exact sentence in p-retry's style:
 * ``Expected `timeoutMs` to be a positive integer, got -5``.
 */
import { ToolHostError } from '../boundary/errors.js';

export function expectPositiveInteger(name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`${name}\` to be a positive integer, got ${show(value)}`,
    );
  }
}

export function expectBoolean(name: string, value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  throw new ToolHostError('INVALID_OPTION', `Expected \`${name}\` to be a boolean, got ${show(value)}`);
}

/** A listener option: absent, or a function. */
export function expectFunction(name: string, value: unknown): void {
  if (value === undefined || typeof value === 'function') return;
  throw new ToolHostError('INVALID_OPTION', `Expected \`${name}\` to be a function, got ${show(value)}`);
}

export function expectNonNegativeInteger(name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`${name}\` to be a non-negative integer, got ${show(value)}`,
    );
  }
}

export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return value.toString();
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
