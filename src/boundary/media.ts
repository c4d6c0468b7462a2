/**
 * Checks of the base64 media a tool returns (images, audio, resource blobs), run where results are
 * encoded (in the call worker, and in the host for its own tools) and again where the host parses a
 * worker's reply. The Messages API refuses a whole request for one malformed image, so an image
 * that it would refuse is stopped here and becomes that call's error instead.
 *
 * Every byte is hostile: headers are read by index within the decoded length, a JPEG's segments are
 * walked forward only (each step moves past at least one byte, and the walk stops at a fixed count),
 * and nothing here throws. What it calls was taken when this module loaded, before any tool ran.
 */

import { ascii, byteAt, imageSize, RIFF, sniffImage, startsWith } from './media-headers.js';
import type { AudioMediaType, ImageMediaType } from './tool-contract.js';

const allocUnsafe = Buffer.allocUnsafe.bind(Buffer);
const bufferWrite = Buffer.prototype.write;
const charCodeAt = String.prototype.charCodeAt;
const indexOf = String.prototype.indexOf;
const apply = Reflect.apply;
const EQUALS = 0x3d;

/**
 * The most base64 text one image may hold: the Messages API's 5 MB per image, which it measures on
 * the base64 string (5 × 1024 × 1024 characters).
 */
export const MAX_IMAGE_BASE64_LENGTH = 5 * 1024 * 1024;

/** The most pixels an image may have on either side (the Messages API's limit for one image). */
export const MAX_IMAGE_SIDE_PIXELS = 8000;

/**
 * The most base64 text one audio block may hold (about 7.5 MB of audio). The Messages API takes no
 * audio; this bound is toolhost's, so that one block can't take a client's whole budget.
 */
export const MAX_AUDIO_BASE64_LENGTH = 10 * 1024 * 1024;

export const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set<ImageMediaType>([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

export const AUDIO_MEDIA_TYPES: ReadonlySet<string> = new Set<AudioMediaType>([
  'audio/wav',
  'audio/mpeg',
  'audio/ogg',
  'audio/flac',
  'audio/webm',
  'audio/mp4',
  'audio/aac',
]);

const AUDIO_TYPE_LIST = [...AUDIO_MEDIA_TYPES].join(', ');

/** The scratch buffer base64 is decoded into, reused: allocating a fresh 1 MB buffer costs 10 times the decode. */
let scratch: Buffer | undefined;
/** The largest scratch buffer kept between checks (a larger decode gets a buffer of its own). */
const MAX_SCRATCH_BYTES = 8 * 1024 * 1024;

/**
 * Decodes strict base64: the standard alphabet, whole groups of four, `=` only as the last one or
 * two; undefined for anything else. Node's decoder is lenient (it skips what it can't read, and
 * takes base64url's `-` and `_`), so what it skipped shows as fewer bytes than the text's length
 * promises; on 1 MB this is about 50 times faster than a regular expression over the text. The bytes
 * are a view of a reused buffer: valid until the next call.
 */
function decodeStrictBase64(data: string): Uint8Array | undefined {
  const length = data.length;
  if (length % 4 !== 0) return undefined;
  if (length === 0) return new Uint8Array(0);
  const last = apply(charCodeAt, data, [length - 1]) === EQUALS;
  const padding = last ? (apply(charCodeAt, data, [length - 2]) === EQUALS ? 2 : 1) : 0;
  if (apply(indexOf, data, ['-']) !== -1 || apply(indexOf, data, ['_']) !== -1) return undefined;
  const expected = (length / 4) * 3 - padding;
  let target: Buffer;
  if (expected > MAX_SCRATCH_BYTES) {
    target = allocUnsafe(expected);
  } else {
    if (scratch === undefined || scratch.length < expected)
      scratch = allocUnsafe(Math.max(expected, 64 * 1024));
    target = scratch;
  }
  // Whatever the decoder skipped shows as fewer bytes than `expected`: it can never write more.
  const written = apply(bufferWrite, target, [data, 0, expected, 'base64']) as number;
  return written === expected ? target.subarray(0, expected) : undefined;
}

/** Whether `data` is strict base64 (what the API and MCP clients decode without guessing). */
export function isStrictBase64(data: string): boolean {
  return decodeStrictBase64(data) !== undefined;
}

/**
 * Why the Messages API would refuse this image, or undefined when it holds: strict base64 within
 * {@link MAX_IMAGE_BASE64_LENGTH}, bytes of the format `mediaType` names, and a header whose
 * dimensions are within {@link MAX_IMAGE_SIDE_PIXELS} per side.
 */
export function imageProblem(mediaType: string, data: string): string | undefined {
  if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
    return `an image has the media type ${quote(mediaType)}; the API takes PNG, JPEG, GIF or WebP`;
  }
  if (data.length === 0) return 'an image has no data';
  if (data.length > MAX_IMAGE_BASE64_LENGTH) {
    return `an image is ${data.length} bytes of base64, over the API's ${MAX_IMAGE_BASE64_LENGTH}-byte limit`;
  }
  const bytes = decodeStrictBase64(data);
  if (bytes === undefined) return "an image's data is not base64";
  const format = sniffImage(bytes);
  if (format === undefined)
    return `an image labelled ${mediaType} does not start as a PNG, JPEG, GIF or WebP`;
  if (format !== mediaType) return `an image labelled ${mediaType} holds ${format} bytes`;
  const size = imageSize(format, bytes);
  if (typeof size === 'string') return `an image labelled ${mediaType} ${size}`;
  if (size.width === 0 || size.height === 0) {
    return `an image is ${size.width}×${size.height} pixels, which is empty`;
  }
  if (size.width > MAX_IMAGE_SIDE_PIXELS || size.height > MAX_IMAGE_SIDE_PIXELS) {
    return `an image is ${size.width}×${size.height} pixels, over the API's ${MAX_IMAGE_SIDE_PIXELS}-pixel limit per side`;
  }
  return undefined;
}

/**
 * Why an audio block is refused, or undefined: a media type toolhost knows, strict base64 within
 * {@link MAX_AUDIO_BASE64_LENGTH}, and bytes that start as that format does.
 */
export function audioProblem(mediaType: string, data: string): string | undefined {
  if (!AUDIO_MEDIA_TYPES.has(mediaType)) {
    return `an audio block has the media type ${quote(mediaType)}; toolhost takes ${AUDIO_TYPE_LIST}`;
  }
  if (data.length === 0) return 'an audio block has no data';
  if (data.length > MAX_AUDIO_BASE64_LENGTH) {
    return `an audio block is ${data.length} bytes of base64, over the ${MAX_AUDIO_BASE64_LENGTH}-byte limit`;
  }
  const bytes = decodeStrictBase64(data);
  if (bytes === undefined) return "an audio block's data is not base64";
  if (!audioMatches(mediaType, bytes)) {
    return `an audio block labelled ${mediaType} does not start as ${mediaType} does`;
  }
  return undefined;
}

// Audio signatures, spelled out once when this module loads.
const WAVE = ascii('WAVE');
const ID3 = ascii('ID3');
const OGGS = ascii('OggS');
const FLAC = ascii('fLaC');
const FTYP = ascii('ftyp');

function audioMatches(mediaType: string, bytes: Uint8Array): boolean {
  switch (mediaType) {
    case 'audio/wav':
      return startsWith(bytes, 0, RIFF) && startsWith(bytes, 8, WAVE);
    case 'audio/mpeg':
      // An ID3 tag first, or straight away an MPEG audio frame's sync (11 bits set).
      return (
        startsWith(bytes, 0, ID3) ||
        (bytes.length >= 2 && byteAt(bytes, 0) === 0xff && (byteAt(bytes, 1) & 0xe0) === 0xe0)
      );
    case 'audio/ogg':
      return startsWith(bytes, 0, OGGS);
    case 'audio/flac':
      return startsWith(bytes, 0, FLAC);
    case 'audio/webm':
      return startsWith(bytes, 0, [0x1a, 0x45, 0xdf, 0xa3]);
    case 'audio/mp4':
      return startsWith(bytes, 4, FTYP);
    case 'audio/aac':
      // An ADTS frame: 12 sync bits, then layer 0.
      return bytes.length >= 2 && byteAt(bytes, 0) === 0xff && (byteAt(bytes, 1) & 0xf6) === 0xf0;
    default:
      return false;
  }
}

function quote(value: string): string {
  const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return shown ?? '""';
}
