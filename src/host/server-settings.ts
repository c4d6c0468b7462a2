/** The slice of the host's settings that MCP servers (src/mcp/servers) read. */
import { join } from 'node:path';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../declaration/check.js';
import type { ServersLoading } from '../mcp/servers/load-servers.js';
import type { NetworkEvent } from '../process/network/egress.js';
import { egressSettings } from '../process/network/network-settings.js';
import type { Settings } from './settings.js';

/** The most processes and threads one server's sandbox may hold at once. */
export const SERVER_MAX_PIDS = 512;
/** The most tools one server may list, and the most pages its list may take. */
export const SERVER_MAX_TOOLS = 1000;
export const SERVER_MAX_LIST_PAGES = 64;

/** `onNetwork` hears each connection a server's egress proxy allowed or refused. */
export function serverSettings(
  settings: Settings,
  onNetwork: (event: NetworkEvent) => void,
): ServersLoading['serverSettings'] {
  return {
    logger: settings.logger,
    tmpRoot: join(settings.tmpRoot, 'servers'),
    memoryMb: settings.processMemoryMb,
    maxPids: SERVER_MAX_PIDS,
    readTimeoutMs: settings.readTimeoutMs,
    listBounds: { maxPages: SERVER_MAX_LIST_PAGES, maxTools: SERVER_MAX_TOOLS },
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    timeoutGraceMs: settings.timeoutGraceMs,
    maxResultBytes: settings.maxResultBytes,
    maxLogChars: settings.maxLogChars,
    schemaLimits: settings.schemaLimits,
    rereadDelaysMs: settings.rereadDelaysMs,
    clock: settings.clock,
    // Under a lock a server's tools are judged with what it runs, so that is digested at every start.
    recordRuns: settings.lockFile !== undefined,
    egress: egressSettings(settings.network, onNetwork),
    secretValues: settings.secretValues,
  };
}
