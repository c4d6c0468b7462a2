/**
 * The image and audio checks on their own, byte by byte: each format's header in its valid forms,
 * and every reason an image or audio block is refused. Hostile headers (truncated, huge sizes,
 * segment walks that go nowhere) end with a reason, never a throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  audioProblem,
  imageProblem,
  isStrictBase64,
  MAX_AUDIO_BASE64_LENGTH,
  MAX_IMAGE_BASE64_LENGTH,
} from '../dist/src/boundary/media.js';

const b64 = (bytes: number[] | Uint8Array) => Buffer.from(bytes as Uint8Array).toString('base64');
const ascii = (value: string) => [...value].map((character) => character.charCodeAt(0));
const le16 = (value: number) => [value & 0xff, (value >> 8) & 0xff];
const le24 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff];
const be16 = (value: number) => [(value >> 8) & 0xff, value & 0xff];
const be32 = (value: number) => [
  (value >>> 24) & 0xff,
  (value >>> 16) & 0xff,
  (value >>> 8) & 0xff,
  value & 0xff,
];

const png = (width: number, height: number) => [
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...be32(13),
  ...ascii('IHDR'),
  ...be32(width),
  ...be32(height),
  8,
  6,
  0,
  0,
  0,
  0,
  0,
  0,
  0,
];
const gif = (width: number, height: number) => [...ascii('GIF89a'), ...le16(width), ...le16(height), 0, 0, 0];
/** A JPEG: SOI, the segments given, then a baseline frame header of `width` × `height`. */
const jpeg = (width: number, height: number, before: number[] = []) => [
  0xff,
  0xd8,
  ...before,
  0xff,
  0xc0,
  ...be16(17),
  8,
  ...be16(height),
  ...be16(width),
  3,
  1,
  0x22,
  0,
  2,
  0x11,
  1,
  3,
  0x11,
  1,
  0xff,
  0xd9,
];
const riff = (chunk: number[]) => [
  ...ascii('RIFF'),
  ...le24(chunk.length + 4),
  0,
  ...ascii('WEBP'),
  ...chunk,
];
const vp8 = (width: number, height: number) =>
  riff([...ascii('VP8 '), 10, 0, 0, 0, 0x9d, 0, 0, 0x9d, 0x01, 0x2a, ...le16(width), ...le16(height)]);
const vp8l = (width: number, height: number) => {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
  return riff([
    ...ascii('VP8L'),
    5,
    0,
    0,
    0,
    0x2f,
    bits & 0xff,
    (bits >> 8) & 0xff,
    (bits >> 16) & 0xff,
    (bits >>> 24) & 0xff,
    0,
    0,
    0,
    0,
    0,
  ]);
};
const vp8x = (width: number, height: number) =>
  riff([...ascii('VP8X'), 10, 0, 0, 0, 0, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);

describe('an image the API takes passes', () => {
  it.each([
    ['a PNG', 'image/png', png(800, 600)],
    ['a PNG of 8000 × 8000', 'image/png', png(8000, 8000)],
    ['a GIF', 'image/gif', gif(1, 1)],
    ['a baseline JPEG', 'image/jpeg', jpeg(640, 480)],
    [
      'a JPEG with fill bytes, a restart marker and an APP segment first',
      'image/jpeg',
      jpeg(64, 32, [0xff, 0xff, 0xd0, 0xff, 0xe0, ...be16(4), 0, 0]),
    ],
    [
      'a progressive JPEG (SOF2) after a DHT',
      'image/jpeg',
      [
        0xff,
        0xd8,
        0xff,
        0xc4,
        ...be16(2),
        0xff,
        0xc2,
        ...be16(11),
        8,
        ...be16(10),
        ...be16(20),
        1,
        1,
        0x11,
        0,
      ],
    ],
    ['a lossy WebP', 'image/webp', vp8(300, 200)],
    ['a lossless WebP', 'image/webp', vp8l(300, 200)],
    ['an extended WebP', 'image/webp', vp8x(8000, 1)],
  ])('%s', (_name, mediaType, bytes) => {
    expect(imageProblem(mediaType, b64(bytes))).toBeUndefined();
  });

  it('a JPEG whose frame header is past its first 64 KiB (large metadata before it)', () => {
    const app = (length: number) => [0xff, 0xe1, ...be16(length), ...new Array(length - 2).fill(0)];
    const bytes = jpeg(100, 50, [...app(60_000), ...app(60_000)]);
    expect(imageProblem('image/jpeg', b64(bytes))).toBeUndefined();
  });
});

describe('an image the API would refuse gets its reason', () => {
  it.each([
    ['not base64', 'image/png', '<<not base64 at all!>> \u0000\u2028', "an image's data is not base64"],
    [
      'base64 with a line break',
      'image/png',
      `${b64(png(1, 1)).slice(0, 8)}\n${b64(png(1, 1)).slice(8)}`,
      "an image's data is not base64",
    ],
    ['base64url', 'image/png', 'iVBO-w0K', "an image's data is not base64"],
    ['padding in the middle', 'image/png', 'iV==iVBO', "an image's data is not base64"],
    ['no data', 'image/png', '', 'an image has no data'],
    [
      'an SVG',
      'image/svg+xml',
      'PHN2Zz4=',
      'an image has the media type "image/svg+xml"; the API takes PNG, JPEG, GIF or WebP',
    ],
    [
      'PNG bytes labelled image/gif',
      'image/gif',
      b64(png(2 ** 31 - 1, 2 ** 31 - 1)),
      'an image labelled image/gif holds image/png bytes',
    ],
    [
      'JPEG bytes labelled image/png',
      'image/png',
      b64(jpeg(1, 1)),
      'an image labelled image/png holds image/jpeg bytes',
    ],
    [
      'bytes of no image format',
      'image/webp',
      b64(ascii('hello world!')),
      'an image labelled image/webp does not start as a PNG, JPEG, GIF or WebP',
    ],
    [
      'a PNG of 2^31-1 × 2^31-1',
      'image/png',
      b64(png(2 ** 31 - 1, 2 ** 31 - 1)),
      "an image is 2147483647×2147483647 pixels, over the API's 8000-pixel limit per side",
    ],
    [
      'a PNG of 8001 × 1',
      'image/png',
      b64(png(8001, 1)),
      "an image is 8001×1 pixels, over the API's 8000-pixel limit per side",
    ],
    ['a PNG of 0 × 10', 'image/png', b64(png(0, 10)), 'an image is 0×10 pixels, which is empty'],
    [
      'a PNG whose first chunk is not IHDR',
      'image/png',
      b64([...png(1, 1).slice(0, 12), ...ascii('IDAT'), ...new Array(12).fill(0)]),
      'an image labelled image/png has no IHDR chunk first',
    ],
    [
      'a PNG cut after its signature',
      'image/png',
      b64(png(1, 1).slice(0, 8)),
      'an image labelled image/png has a truncated header',
    ],
    [
      'a GIF of 65535 × 2',
      'image/gif',
      b64(gif(65535, 2)),
      "an image is 65535×2 pixels, over the API's 8000-pixel limit per side",
    ],
    [
      'a GIF cut in its screen descriptor',
      'image/gif',
      b64(gif(1, 1).slice(0, 8)),
      'an image labelled image/gif has a truncated header',
    ],
    [
      'a JPEG of 65535 × 65535',
      'image/jpeg',
      b64(jpeg(65535, 65535)),
      "an image is 65535×65535 pixels, over the API's 8000-pixel limit per side",
    ],
    [
      'a JPEG with image data before a frame header',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xda, 0, 2]),
      'an image labelled image/jpeg has no frame header before its image data',
    ],
    [
      'a JPEG that ends before a frame header',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xd9]),
      'an image labelled image/jpeg has no frame header before its image data',
    ],
    [
      'a JPEG segment of length 0',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0xff, 0xc0]),
      'an image labelled image/jpeg has a segment shorter than its own length field',
    ],
    [
      'a JPEG segment longer than the file',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0, 0]),
      'an image labelled image/jpeg has a truncated header',
    ],
    [
      'a JPEG of only padding bytes',
      'image/jpeg',
      b64([0xff, 0xd8, ...new Array(1000).fill(0xff)]),
      'an image labelled image/jpeg has a truncated header',
    ],
    [
      'a JPEG of 10 000 restart markers',
      'image/jpeg',
      b64([0xff, 0xd8, ...new Array(10_000).fill([0xff, 0xd0]).flat()]),
      'an image labelled image/jpeg has more than 4096 segments before its frame header',
    ],
    [
      'a JPEG whose frame header is cut',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, 0]),
      'an image labelled image/jpeg has a truncated header',
    ],
    [
      'a JPEG with garbage where a marker should be',
      'image/jpeg',
      b64([0xff, 0xd8, 0xff, 0xe0, 0, 2, 0x00, 0x00, 0, 0]),
      'an image labelled image/jpeg has a segment that does not start with a marker',
    ],
    [
      'a WebP with an unknown first chunk',
      'image/webp',
      b64(riff([...ascii('ALPH'), ...new Array(20).fill(0)])),
      'an image labelled image/webp has no VP8, VP8L or VP8X chunk first',
    ],
    [
      'a lossy WebP without its start code',
      'image/webp',
      b64(riff([...ascii('VP8 '), ...new Array(18).fill(0)])),
      'an image labelled image/webp has a VP8 chunk without its start code',
    ],
    [
      'a lossless WebP without its signature',
      'image/webp',
      b64(riff([...ascii('VP8L'), ...new Array(18).fill(0)])),
      'an image labelled image/webp has a VP8L chunk without its signature',
    ],
    [
      'an extended WebP of 16 777 216 × 1',
      'image/webp',
      b64(vp8x(2 ** 24, 1)),
      "an image is 16777216×1 pixels, over the API's 8000-pixel limit per side",
    ],
    [
      'a WebP cut after its RIFF header',
      'image/webp',
      b64(riff([]).slice(0, 16)),
      'an image labelled image/webp has a truncated header',
    ],
  ])('%s', (_name, mediaType, data, reason) => {
    expect(imageProblem(mediaType, data)).toBe(reason);
  });

  it('an image over 5 MB of base64 is refused before it is decoded', () => {
    const data = 'A'.repeat(MAX_IMAGE_BASE64_LENGTH + 4);
    expect(imageProblem('image/png', data)).toBe(
      `an image is ${data.length} bytes of base64, over the API's ${MAX_IMAGE_BASE64_LENGTH}-byte limit`,
    );
  });
});

describe('audio', () => {
  const wav = [...ascii('RIFF'), 36, 0, 0, 0, ...ascii('WAVE'), ...ascii('fmt ')];
  it.each([
    ['audio/wav', wav],
    ['audio/mpeg', [...ascii('ID3'), 4, 0, 0, 0, 0, 0, 0]],
    ['audio/mpeg', [0xff, 0xfb, 0x90, 0x64]],
    ['audio/ogg', [...ascii('OggS'), 0, 2]],
    ['audio/flac', [...ascii('fLaC'), 0, 0, 0, 34]],
    ['audio/webm', [0x1a, 0x45, 0xdf, 0xa3, 0x9f]],
    ['audio/mp4', [0, 0, 0, 0x20, ...ascii('ftypM4A ')]],
    ['audio/aac', [0xff, 0xf1, 0x50, 0x80]],
  ])('%s bytes that start as %s pass', (mediaType, bytes) => {
    expect(audioProblem(mediaType, b64(bytes))).toBeUndefined();
  });

  it.each([
    [
      'audio/wav',
      b64(ascii('RIFF....AVI ')),
      'an audio block labelled audio/wav does not start as audio/wav does',
    ],
    ['audio/mpeg', b64([0xff]), 'an audio block labelled audio/mpeg does not start as audio/mpeg does'],
    ['audio/wav', 'UklGR@==', "an audio block's data is not base64"],
    ['audio/wav', '', 'an audio block has no data'],
    [
      'audio/x-midi',
      'TVRoZA==',
      'an audio block has the media type "audio/x-midi"; toolhost takes audio/wav, audio/mpeg, audio/ogg, audio/flac, audio/webm, audio/mp4, audio/aac',
    ],
  ])('%s %j is refused', (mediaType, data, reason) => {
    expect(audioProblem(mediaType, data)).toBe(reason);
  });

  it('audio over its bound is refused before it is decoded', () => {
    const data = 'A'.repeat(MAX_AUDIO_BASE64_LENGTH + 4);
    expect(audioProblem('audio/wav', data)).toBe(
      `an audio block is ${data.length} bytes of base64, over the ${MAX_AUDIO_BASE64_LENGTH}-byte limit`,
    );
  });
});

describe('strict base64', () => {
  it.each([
    ['', true],
    ['AAAA', true],
    ['AA==', true],
    ['AAA=', true],
    ['AAA', false],
    ['A===', false],
    ['AA=A', false],
    ['AA AA', false],
    ['AA_-', false],
  ])('%j is %s', (data, expected) => {
    expect(isStrictBase64(data)).toBe(expected);
  });
});

describe('generated hostile headers', () => {
  it('any bytes after any signature, under any media type, end in a reason or a pass, never a throw', () => {
    const signatures = [
      png(1, 1).slice(0, 8),
      [0xff, 0xd8, 0xff],
      ascii('GIF89a'),
      [...ascii('RIFF'), 0, 0, 0, 0, ...ascii('WEBP')],
      [],
    ];
    const types = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
    fc.assert(
      fc.property(
        fc.constantFrom(...signatures),
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom(...types),
        (signature, tail, mediaType) => {
          const problem = imageProblem(mediaType, b64([...signature, ...tail]));
          expect(problem === undefined || typeof problem === 'string').toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('strict base64 against its definition', () => {
  // The definition, as a regular expression (too slow to run on megabytes, exact on small inputs).
  const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
  it('agrees with it on generated strings of base64 and hostile characters', () => {
    const character = fc.constantFrom(...'ABCxyz019+/=-_ \n\t.\u0000é\u2028'.split(''));
    fc.assert(
      fc.property(fc.array(character, { maxLength: 16 }), (characters) => {
        const data = characters.join('');
        expect(isStrictBase64(data)).toBe(STRICT.test(data));
      }),
      { numRuns: 20_000 },
    );
  });
});
