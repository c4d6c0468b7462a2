/**
 * The ToolHost `toolhost serve` runs, over either transport: the command line's host options, the
 * packages loaded and the folders watched, and everything worth a line on stderr (left-out modules,
 * host warnings, what tools printed), since a server has no screen of its own.
 */

import { escapeControl, truncate } from '../../boundary/sanitize.js';
import type { ToolHost } from '../../host/tool-host.js';
import { ToolServer, type ToolServerOptions } from '../../mcp/tool-server.js';
import type { Logger } from '../../shared/logger.js';
import type { ServeArgs } from '../args/command-line.js';
import { optionsSetBy } from '../args/flags.js';
import { packageVersion } from '../package-version.js';
import { messages, writeMessage } from '../ui/messages.js';
import type { OutputStream } from '../ui/terminal.js';
import { createHost, loadAll } from './host-setup.js';

export interface ServedTools {
  host: ToolHost;
  tools: ToolServer;
  /** Closes the host (running calls answer `HOST_CLOSED`), then waits until every answer is handed on. */
  close(): Promise<void>;
}

/** A server's log: warnings (left-out modules, faults, what a tier can't contain) and errors on stderr. */
function serveLogger(stderr: OutputStream): Logger {
  return {
    info: () => {},
    warn: (message) => writeMessage(stderr, messages.hostWarning(message)),
    error: (message) => writeMessage(stderr, messages.hostError(message)),
  };
}

/**
 * Builds the host and loads what the command line names. A mistake (a missing path, a folder that
 * is not a package) throws as it does for every command (a usage error); the host is closed first.
 */
export async function startServing(
  args: ServeArgs,
  stderr: OutputStream,
  options: { listChanged: boolean; legacyLogScope: 'connection' | 'endpoint' },
): Promise<ServedTools> {
  const host = await createHost(args, stderr, { logger: serveLogger(stderr), longRunning: true });
  host.on('output', (event) => {
    for (const log of event.logs) {
      writeMessage(stderr, messages.toolPrinted(event.name, escapeControl(truncate(log.text.trimEnd()))));
    }
  });
  try {
    await loadAll(
      host,
      args.paths.map((path) => ({ shown: path, path })),
    );
    for (const folder of args.watch) await host.watch(folder);
  } catch (error) {
    await host.close();
    throw error;
  }
  const tools = new ToolServer(host, {
    name: 'toolhost',
    version: packageVersion(),
    listChanged: options.listChanged,
    legacyLogScope: options.legacyLogScope,
    ...(optionsSetBy('serve', args, 'serveOption') as Partial<ToolServerOptions>),
  });
  return {
    host,
    tools,
    async close() {
      await host.close();
      await tools.idle();
      tools.close();
    },
  };
}
