/**
 * The secrets proxy reads bound requests and their answers with Node's own HTTP parser, taken from
 * Node's internal `node:_http_common`. Every Node line CI runs must have it where the proxy looks:
 * a Node that moved it would refuse every secret binding at load (with the reason below), so this
 * fails first.
 */
import { describe, expect, it } from 'vitest';
import { nodeHttpParser, secretsUnsupported } from '../dist/src/process/network/secrets/node-http-parser.js';

describe("Node's own HTTP parser, as the secrets proxy takes it", () => {
  it('is there, with the method names and the callbacks the proxy sets', () => {
    const parser = nodeHttpParser();
    expect(parser).toBeDefined();
    expect(parser?.methods).toContain('GET');
    expect(parser?.methods).toContain('POST');
    expect(typeof parser?.HTTPParser.REQUEST).toBe('number');
    expect(typeof parser?.HTTPParser.RESPONSE).toBe('number');
    for (const key of ['kOnMessageBegin', 'kOnHeaders', 'kOnBody', 'kOnMessageComplete'] as const)
      expect(typeof parser?.HTTPParser[key]).toBe('number');
    expect(secretsUnsupported()).toBeUndefined();
  });

  it('parses a request strictly: a length and chunks together is an error', () => {
    const { HTTPParser } = nodeHttpParser() ?? {};
    if (HTTPParser === undefined) throw new Error('no parser');
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.REQUEST, {}, 16 * 1024, 0);
    const result = parser.execute(
      Buffer.from('POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n'),
    );
    parser.close();
    expect(result).toBeInstanceOf(Error);
  });
});
