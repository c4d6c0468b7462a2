/**
 * toolhost serves tools only: it offers no prompts and no resources. It still answers their list
 * requests, with empty lists (and, for 2026-07-28, the cache fields those results must carry), so
 * that a generic client that asks for everything it may show gets a well-formed answer rather than
 * a "method not found" it may take for a broken server; reading or getting any of them is the
 * error the spec names for one that does not exist.
 */
import { ProtocolErrorCode, ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';

/** The capabilities the handlers below need declared (no `listChanged`: the lists never change). */
export const EMPTY_LIST_CAPABILITIES = { prompts: {}, resources: {} } as const;

/** Registers the empty prompt and resource lists on `server` (declared with the capabilities above). */
export function answerEmptyLists(server: Server): void {
  server.setRequestHandler('prompts/list', () => ({ prompts: [] }));
  server.setRequestHandler('prompts/get', (request) => {
    throw Object.assign(new Error(`Invalid params: no prompt ${JSON.stringify(request.params.name)}`), {
      code: ProtocolErrorCode.InvalidParams,
    });
  });
  server.setRequestHandler('resources/list', () => ({ resources: [] }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', (request) => {
    throw new ResourceNotFoundError(request.params.uri);
  });
}
