/**
 * Node's own HTTP parser (llhttp: the binding `node:http` reads requests and answers with), which
 * the secrets proxy reads bound requests and their answers with, so that both ends agree on where
 * each message ends. It comes from `node:_http_common`, where `node:http` itself takes it: an
 * internal module of Node, present from Node 20 to 26. A Node without it has no secrets proxy:
 * secret bindings are refused at load with a reason (granted-secrets.ts, the MCP servers' config),
 * and nothing else of the proxy needs it.
 */
import { createRequire } from 'node:module';

/** What the proxy uses of a parser. */
export interface LlhttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenientFlags: number): void;
  execute(bytes: Buffer): number | Error;
  finish(): number | Error | undefined;
  close(): void;
  [callback: number]: unknown;
}

export interface LlhttpParserClass {
  new (): LlhttpParser;
  REQUEST: number;
  RESPONSE: number;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
}

export interface NodeHttpParser {
  HTTPParser: LlhttpParserClass;
  /** Method names by llhttp's method number. */
  methods: readonly string[];
}

let taken: NodeHttpParser | null | undefined;

/** The parser and its method names, or undefined on a Node that doesn't have them where expected. */
export function nodeHttpParser(): NodeHttpParser | undefined {
  if (taken === undefined) {
    try {
      const common = createRequire(import.meta.url)('node:_http_common') as Partial<NodeHttpParser>;
      const parser = common.HTTPParser;
      taken =
        typeof parser === 'function' &&
        typeof parser.kOnHeadersComplete === 'number' &&
        typeof parser.REQUEST === 'number' &&
        Array.isArray(common.methods)
          ? { HTTPParser: parser, methods: common.methods }
          : null;
    } catch {
      taken = null;
    }
  }
  return taken ?? undefined;
}

/** Why secrets can't be swapped in on this Node, or undefined where they can. */
export function secretsUnsupported(): string | undefined {
  return nodeHttpParser() === undefined
    ? `the egress proxy swaps secrets in with Node's own HTTP parser (node:_http_common), which this Node (${process.version}) does not have; run toolhost on Node 20 to 26`
    : undefined;
}

/** The parser, where the proxy reads a bound request (bindings are refused at load without one). */
export function requireNodeHttpParser(): NodeHttpParser {
  const parser = nodeHttpParser();
  if (parser === undefined) throw new Error(secretsUnsupported());
  return parser;
}
