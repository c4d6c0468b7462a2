/**
 * What the host reports: load and selftest reports, and the events it emits for the host's screens.
 */
import type { CapturedLog } from '../boundary/protocol.js';
import type { JsonValue } from '../boundary/tool-contract.js';
import type { WorkerBudgetEvent } from '../calls/budget-member.js';
import type { NetworkEvent } from '../process/network/egress.js';
import type { ModuleState, ModuleStatus } from '../registry/generation.js';
import type { PackagePermissions } from '../sources/resolve-path.js';

export interface LoadReport {
  /** The package folder, module file or MCP client config that was loaded. */
  source: string;
  /** `servers`: an MCP client config (`mcpServers`); each server's tools are its modules. */
  kind: 'package' | 'module' | 'servers';
  /** The package's `name`, as the loaded version's manifest gives it (a module file has none). */
  packageName?: string;
  /**
   * What the loaded version's manifest asks for (`toolhost.permissions`): asking is not having,
   * the host grants it per its `allowNetwork`. A module file asks for nothing.
   */
  permissions: PackagePermissions;
  /**
   * What this host grants it of that (its `allowNetwork`): `false` (no network), `true` (all of it),
   * or the `host[:port]` rules its calls may reach through the host's egress proxy (process tier).
   */
  network: boolean | string[];
  modules: ModuleStatus[];
  /**
   * Set when the path is a module file that an already loaded package serves: nothing new was
   * loaded, `modules` shows the module as that package serves it, and `unload` of the path is a
   * no-op (unload the package instead).
   */
  servedBy?: string;
}

export interface SelftestReport {
  name: string;
  status: 'passed' | 'failed' | 'no-selftest';
  durationMs: number;
  /** Why it failed; `stack`: where (the tool's own frames, relative to its package), for the host only. */
  error?: { code: string; message: string; stack?: string };
}

/** What one call printed (its stdout and stderr, captured). */
export interface ToolOutputEvent {
  /** The tool's name. */
  name: string;
  callId: string;
  logs: CapturedLog[];
  /** Characters printed past `maxLogChars`, not kept. */
  droppedChars: number;
}

/** What a tool sent with `ctx.emit` during a call. */
export interface ToolProgressEvent {
  /** The tool's name. */
  name: string;
  callId: string;
  data: JsonValue;
}

/** A module's state changed (or it is no longer known: `removed`). */
export interface ModuleEvent {
  /** The state the module is in now (`status.state`), or `removed` (`status` is its last one). */
  type: ModuleState | 'removed';
  /** True when the change is what a re-read ended in (offered, left out, or pending again). */
  reread: boolean;
  status: ModuleStatus;
}

export type { WorkerBudgetEvent } from '../calls/budget-member.js';

export interface ToolHostEvents {
  output: [ToolOutputEvent];
  progress: [ToolProgressEvent];
  module: [ModuleEvent];
  fault: [{ source: string; message: string }];
  /** A package's egress proxy allowed or refused a connection (the process tier in bubblewrap). */
  network: [NetworkEvent];
  /** Workers (threads, or the process tier's package processes) started or ended, with the host's count. */
  workers: [WorkerBudgetEvent];
}
