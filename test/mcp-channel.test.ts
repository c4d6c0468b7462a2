/**
 * The relay channel's lines (src/mcp/channel.ts): only a line signed with the channel's key is read
 * as a message, junk a tool wrote just before a signed line doesn't cost that line, and a line that
 * never ends is dropped rather than held.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LineSplitter, readSignedLine, signedLine } from '../dist/src/mcp/channel.js';

const key = randomBytes(32);
const message = { jsonrpc: '2.0' as const, id: 3, result: { content: [] } };
const line = (text: string) => text.replace(/\n$/, '');

describe('signed lines', () => {
  it('reads a line signed with the key as the message it holds', () => {
    const read = readSignedLine(key, line(signedLine(key, message)));
    expect(read?.message).toEqual(message);
    // The JSON passed on is the JSON signed, as it was written.
    expect(read?.json).toBe(JSON.stringify(message));
  });

  it('refuses a line signed with another key, a made-up signature, or no signature', () => {
    expect(readSignedLine(key, line(signedLine(randomBytes(32), message)))).toBeUndefined();
    expect(readSignedLine(key, `${'0'.repeat(64)} ${JSON.stringify(message)}`)).toBeUndefined();
    expect(readSignedLine(key, JSON.stringify(message))).toBeUndefined();
  });

  it('refuses a signed line changed after signing', () => {
    const signed = line(signedLine(key, message)).replace('"id":3', '"id":4');
    expect(readSignedLine(key, signed)).toBeUndefined();
  });

  it('refuses signed JSON that is not a JSON-RPC message', () => {
    const json = JSON.stringify({ hello: 'world' });
    const signature = createHmac('sha256', key).update(json).digest('hex');
    expect(readSignedLine(key, `${signature} ${json}`)).toBeUndefined();
    // The same construction over a message is read: the signature above was a real one.
    const real = JSON.stringify(message);
    expect(
      readSignedLine(key, `${createHmac('sha256', key).update(real).digest('hex')} ${real}`)?.message,
    ).toEqual(message);
  });

  it('finds a signed line behind junk a tool wrote without a newline', () => {
    const junk = `junk ${'f'.repeat(64)} {"not": "signed"} and more `;
    expect(readSignedLine(key, `${junk}${line(signedLine(key, message))}`)?.json).toBe(
      JSON.stringify(message),
    );
  });

  it('looks for a signed line at most 8 places past the start: each try hashes the rest of the line', () => {
    const fakes = (count: number) => `${'f'.repeat(64)} {x} `.repeat(count);
    const signed = line(signedLine(key, message));
    // The line's start is tried first, then the later places: the 9th would-be signature is too far.
    expect(readSignedLine(key, `${fakes(8)}${signed}`)?.message).toEqual(message);
    expect(readSignedLine(key, `${fakes(9)}${signed}`)).toBeUndefined();
    // A megabyte of them is refused after those few tries, not after one per signature.
    expect(readSignedLine(key, `${fakes(14_000)}${signed}`)).toBeUndefined();
  });
});

describe('LineSplitter', () => {
  const split = (maxLineBytes: number, chunks: string[]) => {
    const lines: string[] = [];
    const dropped: number[] = [];
    const splitter = new LineSplitter({
      maxLineBytes,
      onLine: (text) => lines.push(text),
      onDropped: (bytes) => dropped.push(bytes),
    });
    for (const chunk of chunks) splitter.push(Buffer.from(chunk));
    return { lines, dropped };
  };

  it('joins lines split across chunks and splits chunks holding several', () => {
    expect(split(100, ['ab', 'c\nde\r\nf', 'g\n', 'tail'])).toEqual({
      lines: ['abc', 'de', 'fg'],
      dropped: [],
    });
  });

  it('drops a line longer than the bound, up to its newline, and reads the next one', () => {
    expect(split(8, ['0123456', '789abcdef', 'xyz\nok\n'])).toEqual({ lines: ['ok'], dropped: [20] });
  });
});
