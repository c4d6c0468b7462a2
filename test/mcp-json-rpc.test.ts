/**
 * The relay channel's hand-written JSON-RPC check (src/mcp/json-rpc.ts) answers as the SDK's own
 * `parseJSONRPCMessage` does, and names the kind the SDK's `isJSONRPC*` guards name, for messages
 * well-formed and not: each case is put to both.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { asJsonRpcMessage, kindOf } from '../dist/src/mcp/json-rpc.js';

const RELATED = 'io.modelcontextprotocol/related-task';

/** Each as JSON text, parsed as a line of the channel is. */
const cases: string[] = [
  // Requests.
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{}]}}}',
  '{"jsonrpc":"2.0","id":"x","method":"ping"}',
  '{"jsonrpc":"2.0","id":-7,"method":"m","params":{}}',
  '{"jsonrpc":"2.0","id":1.5,"method":"m"}',
  '{"jsonrpc":"2.0","id":1e300,"method":"m"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}',
  '{"jsonrpc":"2.0","id":1e400,"method":"m"}',
  '{"jsonrpc":"2.0","id":null,"method":"m"}',
  '{"jsonrpc":"2.0","id":true,"method":"m"}',
  '{"jsonrpc":"2.0","id":[1],"method":"m"}',
  '{"jsonrpc":"2.0","id":1,"method":5}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":null}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"t","other":1}}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":3}}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":3.5}}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":null}}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":null}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":[]}}',
  `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"${RELATED}":{"taskId":"a"}}}}`,
  `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"${RELATED}":{"taskId":1}}}}`,
  `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"${RELATED}":null}}}`,
  '{"jsonrpc":"2.0","id":1,"method":"m","extra":1}',
  '{"jsonrpc":"2.0","id":1,"method":"m","__proto__":{"x":1}}',
  '{"jsonrpc":"1.0","id":1,"method":"m"}',
  '{"id":1,"method":"m"}',
  // Notifications.
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}',
  '{"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":{}}}}',
  '{"jsonrpc":"2.0","method":"n","result":{}}',
  '{"jsonrpc":"2.0","method":"n","error":{"code":1,"message":"m"}}',
  // Results.
  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
  '{"jsonrpc":"2.0","id":"a","result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":5}}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":null}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":[1]}}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":"ok"}',
  '{"jsonrpc":"2.0","result":{}}',
  '{"jsonrpc":"2.0","id":null,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"result":{},"more":true}',
  // Errors.
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","data":{"x":1}}}',
  '{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse"}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1e300,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1e300}}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","extra":2}}',
  '{"jsonrpc":"2.0","id":1,"error":null}',
  '{"jsonrpc":"2.0","id":1,"error":[]}',
  // Not messages at all.
  'null',
  '[]',
  '[{"jsonrpc":"2.0","method":"m"}]',
  '"text"',
  '42',
  '{}',
  '{"jsonrpc":"2.0"}',
  '{"jsonrpc":"2.0","id":1}',
];

function sdkAccepts(value: unknown): boolean {
  try {
    parseJSONRPCMessage(value);
    return true;
  } catch {
    return false;
  }
}

function sdkKind(value: unknown): string | undefined {
  if (isJSONRPCRequest(value)) return 'request';
  if (isJSONRPCNotification(value)) return 'notification';
  if (isJSONRPCResultResponse(value)) return 'result';
  if (isJSONRPCErrorResponse(value)) return 'error';
  return undefined;
}

describe('the channel’s JSON-RPC check', () => {
  it.each(cases)('answers as the SDK does: %s', (text) => {
    const value: unknown = JSON.parse(text);
    expect(asJsonRpcMessage(value) !== undefined).toBe(sdkAccepts(value));
    expect(kindOf(value)).toBe(sdkKind(value));
  });

  it('accepts every kind and refuses the rest (the table above holds both)', () => {
    const kinds = cases.map((text) => kindOf(JSON.parse(text)));
    for (const kind of ['request', 'notification', 'result', 'error', undefined]) {
      expect(kinds).toContain(kind);
    }
  });

  it('refuses a message nested 5000 levels deep in its params only where the SDK does', () => {
    let nested: unknown = 1;
    for (let depth = 0; depth < 5000; depth += 1) nested = { a: nested };
    const value = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: nested } };
    expect(kindOf(value)).toBe('request');
    expect(sdkAccepts(value)).toBe(true);
  });
});
