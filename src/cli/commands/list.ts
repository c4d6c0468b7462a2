/**
 * `toolhost list <package-or-module>...`: each source's offered tools (name, parameters,
 * description), its left-out modules with their reasons, and what its manifest asks for (the
 * network). Exit 1 when a module was left out.
 */
import type { ToolInfo } from '../../declaration/check.js';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../declaration/check.js';
import type { LockDifference } from '../../lock/difference.js';
import type { ModuleStatus } from '../../registry/generation.js';
import type { PackagePermissions } from '../../sources/resolve-path.js';
import type { ListArgs } from '../args/command-line.js';
import { ExitCode } from '../exit-codes.js';
import { differenceLines } from '../ui/difference.js';
import { pathInPackage, pathIsJustName } from '../ui/package-paths.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { createHost, inSourceOrder, loadAll } from './host-setup.js';

/** The `--json` document. */
export interface ListJson {
  ok: boolean;
  sources: Array<{
    /** The path as given on the command line. */
    path: string;
    /** Its real path: the package folder or module file. */
    source: string;
    kind: 'package' | 'module' | 'servers';
    packageName: string | null;
    /** What the package's manifest asks for (`toolhost.permissions`); a module file asks for nothing. */
    permissions: PackagePermissions;
    /**
     * The network it gets from this host (`--allow-network`): none (`false`), all of it (`true`),
     * or these hosts (held to them only by the process tier in bubblewrap).
     */
    network: boolean | string[];
    tools: ToolInfo[];
    /** `difference`: under `--lock`, what changed since the module was pinned (field, before, after). */
    leftOut: Array<{
      module: string;
      name: string | null;
      code: string;
      reason: string;
      difference?: LockDifference[];
    }>;
  }>;
}

export async function listCommand(args: ListArgs, io: CliIo): Promise<ExitCode> {
  const host = await createHost(args, io.stderr);
  try {
    const reports = await loadAll(
      host,
      args.paths.map((path) => ({ shown: path, path })),
    );
    const offered = new Map(host.list().map((info) => [info.name, info]));
    const statuses = inSourceOrder(
      host.status(),
      reports.map((report) => report.source),
    );
    const sources: ListJson['sources'] = reports.map((report) => {
      const own = statuses.filter((status) => status.source === report.source);
      return {
        path: report.shown,
        source: report.source,
        kind: report.kind,
        packageName: own[0]?.packageName ?? report.packageName ?? null,
        permissions: report.permissions,
        network: report.network,
        tools: own.flatMap((status) => {
          const info =
            status.state === 'offered' && status.name !== undefined ? offered.get(status.name) : undefined;
          return info === undefined ? [] : [info];
        }),
        leftOut: own.filter((status) => status.state !== 'offered').map(leftOutEntry),
      };
    });
    const ok = sources.every((source) => source.leftOut.length === 0);
    if (args.json) {
      io.stdout.write(`${JSON.stringify({ ok, sources } satisfies ListJson, null, 2)}\n`);
    } else {
      io.stdout.write(renderList(sources, styleFor(io.stdout, io.env)));
    }
    return ok ? ExitCode.ok : ExitCode.failed;
  } finally {
    await host.close();
  }
}

function leftOutEntry(status: ModuleStatus): ListJson['sources'][number]['leftOut'][number] {
  const entry: ListJson['sources'][number]['leftOut'][number] = {
    module: status.path,
    name: status.name ?? null,
    code: status.code ?? 'LEFT_OUT',
    reason: status.reason ?? `the module is ${status.state}`,
  };
  if (status.difference !== undefined) entry.difference = status.difference;
  return entry;
}

function renderList(sources: ListJson['sources'], style: Style): string {
  const blocks = sources.map((source) => {
    // A package by its name and the path it was given as (when that says more); a module by its path.
    const name = source.kind === 'package' ? source.packageName : null;
    const asks = networkNote(source);
    const note = asks === '' ? '' : style.dim(`  [${asks}]`);
    const lines = [
      (name === null || pathIsJustName(source.path, name)
        ? style.bold(name ?? source.path)
        : `${style.bold(name)}  ${style.dim(source.path)}`) + note,
    ];
    for (const tool of source.tools) {
      const notes = [
        tool.concurrency === 'exclusive' ? 'exclusive' : '',
        tool.timeoutMs === DEFAULT_TOOL_TIMEOUT_MS ? '' : `timeout ${tool.timeoutMs} ms`,
        claims(tool),
      ].filter((note) => note !== '');
      const output = tool.outputSchema === undefined ? '' : ` → {${propertyList(tool.outputSchema)}}`;
      const title = tool.title === undefined ? '' : `  ${JSON.stringify(oneLine(tool.title))}`;
      lines.push(
        `  ${style.green('✓')} ${style.bold(tool.name)}(${parameterList(tool)})${output}${title}${notes.length > 0 ? style.dim(`  [${notes.join(', ')}]`) : ''}`,
      );
      lines.push(`      ${oneLine(tool.description)}`);
    }
    for (const entry of source.leftOut) {
      const module = source.kind === 'package' ? pathInPackage(source.source, entry.module) : entry.module;
      const label = entry.name === null ? module : `${entry.name} (${module})`;
      lines.push(
        `  ${style.red('✗')} ${label}  ${style.red('left out')}: ${entry.code}: ${oneLine(entry.reason)}`,
      );
      lines.push(...differenceLines(entry.difference ?? [], '      '));
    }
    if (source.tools.length === 0 && source.leftOut.length === 0) lines.push(style.dim('  (lists no tools)'));
    return lines.join('\n');
  });
  const tools = sources.reduce((sum, source) => sum + source.tools.length, 0);
  const leftOut = sources.reduce((sum, source) => sum + source.leftOut.length, 0);
  return `${blocks.join('\n\n')}\n\n${tools} ${tools === 1 ? 'tool' : 'tools'} offered, ${leftOut} left out\n`;
}

/** `value, from, to?`: the top-level parameters, optional ones marked. */
function parameterList(tool: ToolInfo): string {
  return propertyList(tool.parameterSchema);
}

/**
 * The behaviour a tool's annotations claim, in words (`claims read-only, idempotent`): its own
 * claims, which nothing checks, and the wording says so.
 */
function claims(tool: ToolInfo): string {
  const hints = tool.annotations;
  if (hints === undefined) return '';
  const words = [
    hints.readOnlyHint === true ? 'read-only' : hints.readOnlyHint === false ? 'writes' : '',
    hints.destructiveHint === true ? 'destructive' : hints.destructiveHint === false ? 'not destructive' : '',
    hints.idempotentHint === true ? 'idempotent' : hints.idempotentHint === false ? 'not idempotent' : '',
    hints.openWorldHint === true ? 'open world' : hints.openWorldHint === false ? 'closed world' : '',
  ].filter((word) => word !== '');
  return words.length === 0 ? '' : `claims ${words.join(', ')}`;
}

/** The top-level properties of an object schema, optional ones marked with `?`. */
function propertyList(objectSchema: ToolInfo['parameterSchema']): string {
  const schema = objectSchema as { properties?: unknown; required?: unknown };
  const properties =
    typeof schema.properties === 'object' && schema.properties !== null ? Object.keys(schema.properties) : [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  return properties.map((name) => (required.includes(name) ? name : `${name}?`)).join(', ');
}

/** `asks for the network: api.weather.gov; gets: none`, or nothing for a package that asks none. */
function networkNote(source: ListJson['sources'][number]): string {
  const asked = source.permissions.net;
  if (asked === false) return '';
  const got = source.network;
  const asks = asked === true ? 'asks for the network' : `asks for the network: ${asked.join(', ')}`;
  const gets = got === false ? 'none' : got === true ? 'all of it' : got.join(', ');
  return `${asks}; gets: ${gets}`;
}
