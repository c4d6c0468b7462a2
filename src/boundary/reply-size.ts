/**
 * The size of what crosses from a worker for one call: all content blocks, the `details` and the
 * captured output. `maxResultBytes` caps the sum: the worker cuts text to fit it, and the host
 * measures the reply again with these same functions and refuses one that is over.
 */

import type { CapturedLog } from './protocol.js';
import type { ToolContentBlock } from './tool-contract.js';

const byteLength = Buffer.byteLength;

/** Counted for each content block and log entry on top of its text, so a million empty ones count. */
export const ENTRY_OVERHEAD_BYTES = 16;

export { IMAGE_MEDIA_TYPES } from './media.js';

/** UTF-8 bytes of a string, without counting when it is clearly small. */
export function utf8Bytes(value: string, smallerThan = 0): number {
  if (value.length * 3 < smallerThan) return value.length;
  return byteLength(value, 'utf8');
}

/** Bytes of content blocks: text as UTF-8, media as their base64 text, every string of the others. */
export function contentBytes(content: readonly ToolContentBlock[]): number {
  let bytes = 0;
  for (const block of content) bytes += ENTRY_OVERHEAD_BYTES + blockBytes(block);
  return bytes;
}

/** The bytes one block holds (without its entry overhead). */
export function blockBytes(block: ToolContentBlock): number {
  switch (block.type) {
    case 'text':
      return byteLength(block.text, 'utf8');
    case 'image':
    case 'audio':
      return block.source.data.length;
    case 'resource': {
      const { resource } = block;
      const body = 'text' in resource ? byteLength(resource.text, 'utf8') : resource.blob.length;
      return body + byteLength(resource.uri, 'utf8') + byteLength(resource.mimeType ?? '', 'utf8');
    }
    case 'resource_link':
      return (
        byteLength(block.uri, 'utf8') +
        byteLength(block.name, 'utf8') +
        byteLength(block.title ?? '', 'utf8') +
        byteLength(block.description ?? '', 'utf8') +
        byteLength(block.mimeType ?? '', 'utf8')
      );
  }
}

/** Bytes of captured output: its characters, plus the overhead of each entry. */
export function logBytes(logs: readonly CapturedLog[]): number {
  let bytes = 0;
  for (const log of logs) bytes += log.text.length + ENTRY_OVERHEAD_BYTES;
  return bytes;
}

/**
 * How many bytes each text may keep so that all of them fit `budget` together: texts smaller than
 * an even share keep everything, and what they leave is shared by the larger ones (water-filling).
 * Returns one limit per text, `Infinity` for a text that fits whole.
 */
export function shareTextBudget(sizes: readonly number[], budget: number): number[] {
  const total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= budget) return sizes.map(() => Number.POSITIVE_INFINITY);
  const order = sizes.map((_, index) => index).sort((a, b) => (sizes[a] ?? 0) - (sizes[b] ?? 0));
  const limits: number[] = sizes.map(() => 0);
  let left = Math.max(0, budget);
  let remaining = sizes.length;
  for (const index of order) {
    const share = Math.floor(left / remaining);
    const size = sizes[index] ?? 0;
    const keep = Math.min(size, share);
    limits[index] = keep === size ? Number.POSITIVE_INFINITY : keep;
    left -= keep;
    remaining -= 1;
  }
  return limits;
}
