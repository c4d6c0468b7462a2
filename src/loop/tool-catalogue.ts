/**
 * The tools of one request: what is offered to the model, and how each name the model may call is run.
 * Built afresh for every request from one snapshot of the host, so the definitions sent and the tools
 * run always agree.
 */
import type { ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { ToolConcurrency } from '../boundary/tool-contract.js';
import type { ToolInfo } from '../declaration/check.js';
import { anthropicTool } from './anthropic-tool.js';
import { LoopFault } from './loop-error.js';
import type { LoopHost } from './loop-host.js';
import type { LoopTool } from './loop-tool.js';

/** How a name the model calls is run: by the loop itself, or by the host. */
export type RunnableTool = { source: 'loop'; tool: LoopTool } | { source: 'host'; info: ToolInfo };

export interface ToolCatalogue {
  /** The `tools` of the request, in order: the body's, the loop tools, then the host's. */
  definitions: ToolUnion[];
  /** Every name that runs locally. Server tools are not here: the API runs them. */
  runnable: ReadonlyMap<string, RunnableTool>;
}

export interface CatalogueSources {
  /** The body's own tools: server tools and client tools pass unchanged; those with `run` run here. */
  bodyTools: ReadonlyArray<ToolUnion | LoopTool>;
  loopTools: readonly LoopTool[];
  host: LoopHost | undefined;
  withheld: ReadonlySet<string>;
}

/**
 * Withheld names are left out everywhere. A name the body or the loop tools already use wins over the
 * host's tool of the same name (the caller chose it explicitly).
 */
export function buildCatalogue(sources: CatalogueSources): ToolCatalogue {
  const definitions: ToolUnion[] = [];
  const runnable = new Map<string, RunnableTool>();
  const taken = new Set<string>();

  for (const tool of [...sources.bodyTools, ...sources.loopTools]) {
    const name = toolName(tool);
    if (name !== undefined) {
      if (sources.withheld.has(name)) continue;
      taken.add(name);
    }
    if (isLoopTool(tool)) {
      definitions.push(definitionOf(tool));
      runnable.set(tool.name, { source: 'loop', tool });
    } else {
      definitions.push(tool);
    }
  }

  for (const info of hostTools(sources.host)) {
    if (sources.withheld.has(info.name) || taken.has(info.name)) continue;
    taken.add(info.name);
    definitions.push(anthropicTool(info));
    runnable.set(info.name, { source: 'host', info });
  }
  return { definitions, runnable };
}

export function concurrencyOf(entry: RunnableTool): ToolConcurrency {
  return entry.source === 'host' ? entry.info.concurrency : (entry.tool.concurrency ?? 'parallel');
}

export function isLoopTool(tool: ToolUnion | LoopTool): tool is LoopTool {
  return Object.hasOwn(tool, 'run') && typeof (tool as { run?: unknown }).run === 'function';
}

/** The name the model calls a tool by; toolsets without a `name` have none here. */
export function toolName(tool: ToolUnion | LoopTool): string | undefined {
  return 'name' in tool && typeof tool.name === 'string' ? tool.name : undefined;
}

/** The API definition of a loop tool: everything but what only the loop reads. */
function definitionOf(tool: LoopTool): ToolUnion {
  const { run: _run, concurrency: _concurrency, ...definition } = tool;
  return definition;
}

function hostTools(host: LoopHost | undefined): readonly ToolInfo[] {
  if (host === undefined) return [];
  try {
    return host.list();
  } catch (thrown) {
    throw new LoopFault('tool_host_error', 'host.list()', thrown);
  }
}
