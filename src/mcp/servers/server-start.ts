/**
 * Starting one server entry: what its sandbox holds, its environment, the process, `initialize`
 * and `tools/list`, each bounded. Never runs a server outside bubblewrap: without it (or with a
 * grant this version can't give) the server is left out with the reason and the fix.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { LeftOutCode } from '../../boundary/errors.js';
import type { ServerRuns } from '../../lock/server-runs.js';
import type { EgressSettings } from '../../process/network/egress.js';
import type { CgroupSupport } from '../../process/sandbox/memory-cgroup.js';
import type { SandboxSupport } from '../../process/sandbox/sandbox.js';
import type { Clock } from '../../registry/reread-schedule.js';
import type { SchemaLimits } from '../../schema/json-schema.js';
import type { Logger } from '../../shared/logger.js';
import type { ServerEntry } from './config.js';
import { type ListBounds, ServerConnection } from './connection.js';
import { launchThroughEgress, serverEgress } from './server-egress.js';
import { serverRunsOf } from './server-files.js';
import { planServer, type ServerPlan } from './server-sandbox.js';

/** What starting and running servers reads of the host's settings. */
export interface ServerSettings {
  logger: Logger;
  sandbox: SandboxSupport;
  cgroups: CgroupSupport;
  /** Each server's tmp folder (HOME, TMPDIR) is made under this one. */
  tmpRoot: string;
  /** The host's environment, for `allowEnv`, and its PATH, for finding a command. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  memoryMb: number;
  maxPids: number;
  /** The bound on `initialize`, and on `tools/list` (all its pages). */
  readTimeoutMs: number;
  listBounds: Omit<ListBounds, 'timeoutMs'>;
  defaultTimeoutMs: number;
  timeoutGraceMs: number;
  maxResultBytes: number;
  /** How much of a server's log messages one call keeps (its `output`). */
  maxLogChars: number;
  schemaLimits: SchemaLimits;
  rereadDelaysMs: readonly number[];
  /** The clock the re-read schedule runs on. */
  clock: Clock;
  /** Under a lock: what each server runs is digested at every start, before its tools are judged. */
  recordRuns: boolean;
  /** What every server's egress proxy shares with the packages': bounds, test switches, events. */
  egress: EgressSettings;
  /** The values the host grants secrets (the `secrets` option, `--secret`). */
  secretValues: Readonly<Record<string, string>>;
}

export type StartedServer =
  | {
      ok: true;
      connection: ServerConnection;
      tools: unknown[];
      plan: ServerPlan;
      /** What it runs, when `recordRuns` asked for it. */
      runs: ServerRuns | undefined;
    }
  | { ok: false; code: LeftOutCode; reason: string };

export async function startServer(entry: ServerEntry, settings: ServerSettings): Promise<StartedServer> {
  const { sandbox } = settings;
  if (!sandbox.available) {
    return {
      ok: false,
      code: 'SERVER_UNSUPPORTED',
      reason: `toolhost runs MCP servers only inside bubblewrap, and ${sandbox.reason} (install it: apt-get install bubblewrap)`,
    };
  }
  const hostPath = settings.hostEnv['PATH'] ?? '';
  const plan = await planServer(entry, hostPath);
  if (typeof plan === 'string') return { ok: false, code: 'SERVER_FAILED', reason: plan };
  // What runs: the plan, routed through its egress (a lock pins the plan, never the route).
  let launched = plan;
  const tmpDir = join(
    settings.tmpRoot,
    `server-${createHash('sha256').update(`${entry.folder}\0${entry.name}`).digest('hex').slice(0, 12)}`,
  );
  const env: Record<string, string> = { PATH: plan.path, HOME: tmpDir, TMPDIR: tmpDir };
  for (const name of entry.allowEnv) {
    const value = settings.hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, entry.env);
  // Its own proxy, for this run of it: ended with its process (or here, when it never starts).
  // Its folder beside the server's tmp folder, never in it: the server can't touch its proxy's socket.
  const egress = serverEgress(entry, settings);
  if (egress !== undefined) {
    try {
      const launch = await launchThroughEgress(egress, plan, env['NODE_OPTIONS']);
      launched = launch.plan;
      Object.assign(env, launch.env);
    } catch (error) {
      await egress.close();
      return failed(error, 'could not be given its network');
    }
  }
  // Digested while the server starts; a digest that fails leaves the tools unpinnable, never offered.
  const runs = settings.recordRuns
    ? serverRunsOf(entry, plan).catch(() => undefined)
    : Promise.resolve(undefined);
  let connection: ServerConnection;
  const started = Date.now();
  try {
    connection = await ServerConnection.open(
      {
        plan: launched,
        sandbox,
        cgroups: settings.cgroups,
        tmpDir,
        env,
        memoryMb: settings.memoryMb,
        maxPids: settings.maxPids,
        roots: [...entry.read, ...entry.write],
        egress,
      },
      settings.readTimeoutMs,
    );
  } catch (error) {
    await egress?.close();
    return failed(error, 'failed to start');
  }
  try {
    const timeoutMs = Math.max(1, settings.readTimeoutMs - (Date.now() - started));
    const tools = await connection.listTools({ ...settings.listBounds, timeoutMs });
    return { ok: true, connection, tools, plan, runs: await runs };
  } catch (error) {
    // Ended before it is left out: its place in the worker budget comes back only then.
    connection.close();
    await connection.ended;
    return failed(error, 'failed to list its tools');
  }
}

function failed(error: unknown, what: string): StartedServer {
  const timedOut = error instanceof Error && error.name === 'TimeoutError';
  const message = error instanceof Error ? error.message : String(error);
  return {
    ok: false,
    code: timedOut ? 'DECLARATION_TIMEOUT' : 'SERVER_FAILED',
    reason: timedOut ? `it ${message}` : `it ${what}: ${message}`,
  };
}
