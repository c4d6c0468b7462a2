/**
 * One tool of a server's `tools/list`, checked with the declaration checks every module's
 * declaration goes through (src/declaration/check.ts): a name the Messages API accepts (as given, or
 * `<prefix>_<name>`), a description, an `inputSchema` that compiles (draft-07 or 2020-12), no
 * invisible or control characters in anything the model reads; `title`, `annotations` and
 * `outputSchema` kept. The server's own claims about timeouts or concurrency are not read.
 */
import { checkPlainData, MAX_DATA_DEPTH } from '../../boundary/plain-data.js';
import { type FieldRead, MAX_FIELD_BYTES, type RawDeclaration } from '../../boundary/protocol.js';
import { own, record } from '../../boundary/untrusted.js';
import { ANNOTATION_HINTS, checkDeclaration } from '../../declaration/check.js';
import { showHidden } from '../../declaration/visible-text.js';
import type { ModuleRead } from '../../registry/generation.js';
import type { SchemaLimits } from '../../schema/json-schema.js';

/** A listed tool: its name as the server knows it (what `tools/call` sends), and how its check ended. */
export interface CheckedServerTool {
  serverName: string;
  read: ModuleRead;
}

export interface ToolCheckSettings {
  prefix: string | undefined;
  /** The calls' timeout (the entry's `timeoutMs`, else the host's default). */
  timeoutMs: number;
  schemaLimits: SchemaLimits;
}

/** The longest tool name kept for a status line when the name itself is refused. */
const SHOWN_NAME_CHARS = 80;

export function checkServerTool(tool: unknown, settings: ToolCheckSettings): CheckedServerTool {
  const data = record(tool);
  const name = own(data, 'name');
  if (data === undefined || typeof name !== 'string') {
    return { serverName: '', read: invalid('a listed tool has no string name') };
  }
  const shown = showHidden(name.slice(0, SHOWN_NAME_CHARS));
  const size = checkPlainData(tool, { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_FIELD_BYTES }, shown);
  if (!size.ok) return { serverName: name, read: invalid(`tool ${shown}: ${size.problem}`) };
  const raw: RawDeclaration = {
    name: value(settings.prefix === undefined ? name : `${settings.prefix}_${name}`),
    description: field(own(data, 'description')),
    parameterSchema: field(own(data, 'inputSchema')),
    timeoutMs: value(settings.timeoutMs),
    concurrency: { state: 'missing' },
    title: field(own(data, 'title') ?? annotationTitle(own(data, 'annotations'))),
    annotations: field(hintsOf(own(data, 'annotations'))),
    outputSchema: field(own(data, 'outputSchema')),
    misnamedSchema: null,
    hasRun: true,
    hasSelftest: false,
  };
  const checked = checkDeclaration(raw, settings.schemaLimits);
  if (!checked.ok) {
    const reason = checked.reason.replace(/\bparameterSchema\b/g, 'inputSchema');
    return {
      serverName: name,
      read: { kind: 'failed', code: checked.code, reason: `tool ${shown}: ${reason}` },
    };
  }
  return {
    serverName: name,
    read: {
      kind: 'read',
      info: checked.info,
      validate: checked.validate,
      validateOutput: checked.validateOutput,
      hasSelftest: false,
    },
  };
}

/** MCP's annotations, keeping only the hints the host passes on (MCP puts a `title` there too). */
function hintsOf(annotations: unknown): unknown {
  const data = record(annotations);
  if (data === undefined) return annotations;
  const hints: Record<string, unknown> = {};
  for (const hint of ANNOTATION_HINTS) if (own(data, hint) !== undefined) hints[hint] = own(data, hint);
  return Object.keys(hints).length === 0 ? undefined : hints;
}

function annotationTitle(annotations: unknown): unknown {
  return own(record(annotations), 'title');
}

function field(read: unknown): FieldRead {
  return read === undefined ? { state: 'missing' } : value(read);
}

function value(read: unknown): FieldRead {
  return { state: 'value', value: read as never };
}

function invalid(reason: string): ModuleRead {
  return { kind: 'failed', code: 'DECLARATION_INVALID', reason };
}
