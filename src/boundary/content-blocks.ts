/**
 * One content block of a result, read from a value a tool made (in its worker) or a worker sent (on
 * the host): the same check on both sides of the boundary, so what the worker lets through is what
 * the host accepts, and a forged reply gets no further than an honest one. A fresh block is built of
 * the fields read; anything else on the value is dropped. Never throws on a structured clone; on a
 * tool's own object a getter may throw, which the encoder catches.
 */

import { audioProblem, imageProblem, isStrictBase64 } from './media.js';
import type {
  AudioMediaType,
  ImageMediaType,
  ResourceContents,
  ResourceLinkContentBlock,
  ToolContentBlock,
} from './tool-contract.js';
import { type Data, own, record } from './untrusted.js';

const regExpTest = RegExp.prototype.test;
const apply = Reflect.apply;

/** The longest URI a resource or a link may have. */
export const MAX_URI_LENGTH = 8192;
/** The longest name, title or media type of a resource link. */
export const MAX_LABEL_LENGTH = 1024;

/** A URI: a scheme, then anything but whitespace and control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;
/** A media type: `type/subtype`, parameters allowed, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const MIME_TYPE = /^[\w.+-]{1,127}\/[\w.+-]{1,127}(?:;[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*)?$/;

/** The block, or why it is refused (one phrase, for the call's `TOOL_BAD_RESULT`). */
export function readContentBlock(value: unknown): ToolContentBlock | string {
  const block = record(value);
  if (block === undefined) return 'a content block is not a plain object';
  const type = own(block, 'type');
  switch (type) {
    case 'text': {
      const text = own(block, 'text');
      return typeof text === 'string' ? { type, text } : 'a text block has no string `text`';
    }
    case 'image':
    case 'audio': {
      const source = record(own(block, 'source'));
      if (source === undefined || own(source, 'type') !== 'base64') {
        return `an ${type} block needs a base64 \`source\``;
      }
      const data = own(source, 'data');
      const mediaType = own(source, 'media_type');
      if (typeof data !== 'string' || typeof mediaType !== 'string') {
        return `an ${type} block needs string \`data\` and \`media_type\``;
      }
      const problem = type === 'image' ? imageProblem(mediaType, data) : audioProblem(mediaType, data);
      if (problem !== undefined) return problem;
      return type === 'image'
        ? { type, source: { type: 'base64', media_type: mediaType as ImageMediaType, data } }
        : { type, source: { type: 'base64', media_type: mediaType as AudioMediaType, data } };
    }
    case 'resource': {
      const resource = readResource(record(own(block, 'resource')));
      return typeof resource === 'string' ? resource : { type, resource };
    }
    case 'resource_link':
      return readLink(block);
    default:
      return `a content block has an unknown type ${describeType(type)}`;
  }
}

function readResource(resource: Data | undefined): ResourceContents | string {
  if (resource === undefined) return 'a resource block has no `resource` object';
  const uri = readUri(own(resource, 'uri'), 'a resource');
  if (!uri.ok) return uri.problem;
  const mimeType = readMimeType(own(resource, 'mimeType'), 'a resource');
  if (mimeType.problem !== undefined) return mimeType.problem;
  const text = own(resource, 'text');
  const blob = own(resource, 'blob');
  const mime = mimeType.value === undefined ? {} : { mimeType: mimeType.value };
  if (typeof text === 'string' && blob === undefined) return { uri: uri.value, ...mime, text };
  if (typeof blob === 'string' && text === undefined) {
    if (!isStrictBase64(blob)) return "a resource's blob is not base64";
    return { uri: uri.value, ...mime, blob };
  }
  return 'a resource needs a string `text` or a base64 `blob` (one of them)';
}

function readLink(block: Data): ResourceLinkContentBlock | string {
  const uri = readUri(own(block, 'uri'), 'a resource link');
  if (!uri.ok) return uri.problem;
  const name = own(block, 'name');
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_LABEL_LENGTH) {
    return `a resource link needs a \`name\` of 1 to ${MAX_LABEL_LENGTH} characters`;
  }
  const link: ResourceLinkContentBlock = { type: 'resource_link', uri: uri.value, name };
  for (const field of ['title', 'description'] as const) {
    const value = own(block, field);
    if (value === undefined) continue;
    if (typeof value !== 'string') return `a resource link's \`${field}\` is not a string`;
    link[field] = value;
  }
  const mimeType = readMimeType(own(block, 'mimeType'), 'a resource link');
  if (mimeType.problem !== undefined) return mimeType.problem;
  if (mimeType.value !== undefined) link.mimeType = mimeType.value;
  const size = own(block, 'size');
  if (size !== undefined) {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      return "a resource link's `size` is not a count of bytes";
    }
    link.size = size;
  }
  return link;
}

function readUri(value: unknown, what: string): { ok: true; value: string } | { ok: false; problem: string } {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URI_LENGTH) {
    return { ok: false, problem: `${what} needs a \`uri\` of 1 to ${MAX_URI_LENGTH} characters` };
  }
  if (apply(regExpTest, URI, [value]) !== true) {
    return {
      ok: false,
      problem: `${what}'s \`uri\` is not a URI (a scheme, no spaces or control characters)`,
    };
  }
  return { ok: true, value };
}

function readMimeType(value: unknown, what: string): { value?: string; problem?: string } {
  if (value === undefined) return {};
  if (
    typeof value !== 'string' ||
    value.length > MAX_LABEL_LENGTH ||
    apply(regExpTest, MIME_TYPE, [value]) !== true
  ) {
    return { problem: `${what}'s \`mimeType\` is not a media type` };
  }
  return { value };
}

function describeType(type: unknown): string {
  try {
    const shown = JSON.stringify(String(type));
    return shown.length > 80 ? `${shown.slice(0, 77)}..."` : shown;
  } catch {
    return 'that can not be shown';
  }
}
