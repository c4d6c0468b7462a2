/**
 * Reading an image's header from its bytes: which of the four formats the API takes it starts as,
 * and the dimensions its header claims. Every byte is hostile: headers are read by index within the
 * length, a JPEG's segments are walked forward only (each step moves past at least one byte, and the
 * walk stops at a fixed count), and nothing here throws.
 */

/** The most segments read before a JPEG's frame header; real files have a few dozen. */
const MAX_JPEG_SEGMENTS = 4096;

// Signatures, spelled out once when this module loads.
const GIF87A = ascii('GIF87a');
const GIF89A = ascii('GIF89a');
/** RIFF, the container of WebP images and WAV audio. */
export const RIFF = ascii('RIFF');
const WEBP = ascii('WEBP');
const IHDR = ascii('IHDR');
const VP8 = ascii('VP8 ');
const VP8L = ascii('VP8L');
const VP8X = ascii('VP8X');

/** The image formats the API takes. */
export type Format = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** Which image format the bytes start with, if any of the four. */
export function sniffImage(bytes: Uint8Array): Format | undefined {
  if (startsWith(bytes, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, 0, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, 0, GIF87A) || startsWith(bytes, 0, GIF89A)) return 'image/gif';
  if (startsWith(bytes, 0, RIFF) && startsWith(bytes, 8, WEBP)) return 'image/webp';
  return undefined;
}

/** An image's dimensions, in pixels. */
export interface Size {
  width: number;
  height: number;
}

const TRUNCATED = 'has a truncated header';

/** An image's dimensions from its header, or what is wrong with the header. */
export function imageSize(format: Format, bytes: Uint8Array): Size | string {
  return SIZE_OF[format](bytes);
}

const SIZE_OF: Record<Format, (bytes: Uint8Array) => Size | string> = {
  'image/png': (bytes) => pngSize(bytes),
  'image/jpeg': (bytes) => jpegSize(bytes),
  'image/gif': (bytes) => gifSize(bytes),
  'image/webp': (bytes) => webpSize(bytes),
};

function pngSize(bytes: Uint8Array): Size | string {
  if (bytes.length < 24) return TRUNCATED;
  if (uint32be(bytes, 8) !== 13 || !startsWith(bytes, 12, IHDR)) return 'has no IHDR chunk first';
  return { width: uint32be(bytes, 16), height: uint32be(bytes, 20) };
}

function gifSize(bytes: Uint8Array): Size | string {
  if (bytes.length < 10) return TRUNCATED;
  return { width: uint16le(bytes, 6), height: uint16le(bytes, 8) };
}

function webpSize(bytes: Uint8Array): Size | string {
  if (bytes.length < 30) return TRUNCATED;
  if (startsWith(bytes, 12, VP8)) {
    // A key frame: 3 bytes of frame tag, the start code, then 14-bit width and height.
    if (!startsWith(bytes, 23, [0x9d, 0x01, 0x2a])) return 'has a VP8 chunk without its start code';
    return { width: uint16le(bytes, 26) & 0x3fff, height: uint16le(bytes, 28) & 0x3fff };
  }
  if (startsWith(bytes, 12, VP8L)) {
    if (byteAt(bytes, 20) !== 0x2f) return 'has a VP8L chunk without its signature';
    const bits = uint32le(bytes, 21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (startsWith(bytes, 12, VP8X)) {
    return { width: uint24le(bytes, 24) + 1, height: uint24le(bytes, 27) + 1 };
  }
  return 'has no VP8, VP8L or VP8X chunk first';
}

/**
 * A JPEG's size from its first frame header (SOF0–SOF15 but DHT, JPG and DAC), reached by walking
 * the segments: markers may be padded with 0xFF, standalone markers have no length, every other
 * segment is skipped by its length. Image data (SOS) or the end (EOI) before a frame header is a
 * JPEG without one; running off the bytes is {@link TRUNCATED}.
 */
function jpegSize(bytes: Uint8Array): Size | string {
  let position = 2;
  for (let segment = 0; segment < MAX_JPEG_SEGMENTS; segment++) {
    if (position >= bytes.length) return TRUNCATED;
    if (byteAt(bytes, position) !== 0xff) return 'has a segment that does not start with a marker';
    while (position < bytes.length && byteAt(bytes, position) === 0xff) position += 1;
    if (position >= bytes.length) return TRUNCATED;
    const marker = byteAt(bytes, position);
    position += 1;
    if (marker === 0xd9 || marker === 0xda) return 'has no frame header before its image data';
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (position + 2 > bytes.length) return TRUNCATED;
    const length = uint16be(bytes, position);
    if (length < 2) return 'has a segment shorter than its own length field';
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (position + 7 > bytes.length) return TRUNCATED;
      return { height: uint16be(bytes, position + 3), width: uint16be(bytes, position + 5) };
    }
    position += length;
  }
  return `has more than ${MAX_JPEG_SEGMENTS} segments before its frame header`;
}

/** The byte at `index`, or -1 past the end. */
export function byteAt(bytes: Uint8Array, index: number): number {
  return index < bytes.length ? (bytes[index] as number) : -1;
}

/** Whether the bytes at `offset` are `expected`. */
export function startsWith(bytes: Uint8Array, offset: number, expected: readonly number[]): boolean {
  if (offset + expected.length > bytes.length) return false;
  for (let index = 0; index < expected.length; index++) {
    if (bytes[offset + index] !== expected[index]) return false;
  }
  return true;
}

/** A signature's bytes, from its ASCII spelling. */
export function ascii(value: string): number[] {
  const codes: number[] = [];
  for (let index = 0; index < value.length; index++) codes.push(value.charCodeAt(index));
  return codes;
}

function uint16be(bytes: Uint8Array, at: number): number {
  return (byteAt(bytes, at) << 8) | byteAt(bytes, at + 1);
}

function uint16le(bytes: Uint8Array, at: number): number {
  return byteAt(bytes, at) | (byteAt(bytes, at + 1) << 8);
}

function uint24le(bytes: Uint8Array, at: number): number {
  return byteAt(bytes, at) | (byteAt(bytes, at + 1) << 8) | (byteAt(bytes, at + 2) << 16);
}

function uint32le(bytes: Uint8Array, at: number): number {
  return (uint16le(bytes, at) | (uint16le(bytes, at + 2) << 16)) >>> 0;
}

function uint32be(bytes: Uint8Array, at: number): number {
  return ((uint16be(bytes, at) << 16) | uint16be(bytes, at + 2)) >>> 0;
}
