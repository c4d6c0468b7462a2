/**
 * Tool modules that differ from their siblings in one value (what `run` throws or returns, one
 * declared field), written from one template each into a temp folder of this test process rather
 * than kept as near-identical copies under fixtures/. A case names them by file, as it names any
 * fixture; `generatedModule` says where the file is.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Variant {
  /** The file's first line: what this variant does. */
  why: string;
  /** The tool's description. */
  description: string;
  /** The declaration's lines, after `name` and `description`. */
  declaration: string;
  /** The body of `run`. */
  run: string;
  /** The expression `name` is declared as; by default the file's name in snake case. */
  name?: string;
}

const OBJECT_PARAMETERS = "export const parameterSchema = { type: 'object' };";

/** `run` throws `value`. */
const throwing = (why: string, description: string, value: string): Variant => ({
  why,
  description,
  declaration: OBJECT_PARAMETERS,
  run: `  throw ${value};`,
});

/** `run` returns what `body` makes. */
const returning = (why: string, description: string, body: string): Variant => ({
  why,
  description,
  declaration: OBJECT_PARAMETERS,
  run: body,
});

/** A declared `timeoutMs` the host can't use: the default applies and the tool is still offered. */
const badTimeout = (why: string, description: string, declaration: string): Variant => ({
  why: `${why}: the default applies and the tool is still offered.`,
  description,
  declaration: `${OBJECT_PARAMETERS}\n${declaration}`,
  run: "  return 'ran';",
});

/** One richer declaration field (title, annotations, outputSchema, or the schema's name) is off. */
const richField = (why: string, declaration: string, parameters = OBJECT_PARAMETERS): Variant => ({
  why,
  description: 'A tool with richer declaration fields',
  declaration: parameters === '' ? declaration : `${parameters}\n${declaration}`,
  run: "  return 'ran';",
});

/** A declaration the host must refuse (its name or its parameterSchema): the tool is never offered. */
const refused = (why: string, description: string, declaration: string, name?: string): Variant => ({
  why,
  description,
  declaration,
  run: "  return 'never offered';",
  ...(name === undefined ? {} : { name }),
});

const VARIANTS: Record<string, Variant> = {
  'call-throw-error.js': throwing(
    'Throws an Error from run.',
    'Throws an Error',
    "new Error('the weather service is down')",
  ),
  'call-throw-null.js': throwing('Throws null from run.', 'Throws null', 'null'),
  'call-throw-undefined.js': throwing('Throws undefined from run.', 'Throws undefined', 'undefined'),
  'call-throw-string.js': throwing('Throws a string from run.', 'Throws a string', "'out of cheese'"),
  'call-throw-object.js': throwing(
    'Throws a plain object from run.',
    'Throws an object',
    "{ status: 503, reason: 'busy' }",
  ),
  'call-returns-function.js': returning(
    "Returns a function, which can't be sent to the model.",
    'Returns a function',
    '  return { answer: () => 42 };',
  ),
  'call-returns-symbol.js': returning(
    "Returns a symbol, which can't be sent to the model.",
    'Returns a symbol',
    "  return Symbol('secret');",
  ),
  'call-returns-proxy.js': returning(
    "Returns a Proxy, which can't be cloned to the host.",
    'Returns a Proxy',
    "  return new Proxy({ looks: 'plain' }, {});",
  ),
  'call-returns-bigint.js': returning(
    "Returns a BigInt inside an object: JSON can't encode it, so it is inspected.",
    'Returns a BigInt',
    '  return { total: 12345678901234567890n };',
  ),
  'call-returns-cycle.js': returning(
    "Returns an object that contains itself: JSON can't encode it, so it is inspected.",
    'Returns a cycle',
    "  const node = { name: 'loop' };\n  node.self = node;\n  return node;",
  ),
  'decl-timeout-infinity.js': badTimeout(
    'Declares timeoutMs as Infinity',
    'An infinite timeout',
    'export const timeoutMs = Number.POSITIVE_INFINITY;',
  ),
  'decl-timeout-negative.js': badTimeout(
    'Declares a negative timeoutMs',
    'A negative timeout',
    'export const timeoutMs = -5;',
  ),
  'decl-timeout-string.js': badTimeout(
    'Declares timeoutMs as a string',
    'A timeout that is a string',
    "export const timeoutMs = '500';",
  ),
  'decl-timeout-throws.js': badTimeout(
    'Its timeoutMs (a zero-argument function) throws',
    'A timeout that throws',
    "export function timeoutMs() {\n  throw new Error('no timeout for you');\n}",
  ),
  'title-number.js': richField('A title that is a number.', 'export const title = 42;'),
  'title-too-long.js': richField('A title of 300 characters.', "export const title = 'T'.repeat(300);"),
  'title-throws.js': richField(
    'A title getter that throws.',
    "export function title() {\n  throw new Error('no title today');\n}",
  ),
  'annotations-array.js': richField(
    'Annotations as an array.',
    "export const annotations = ['readOnlyHint'];",
  ),
  'annotations-not-boolean.js': richField(
    'A hint that is a string, not a boolean.',
    "export const annotations = { destructiveHint: 'no' };",
  ),
  'annotations-not-plain.js': richField(
    'Annotations that are a class instance, not plain data.',
    'export const annotations = new (class Hints {\n  readOnlyHint = true;\n})();',
  ),
  'annotations-unknown-hint.js': richField(
    "An annotation toolhost does not know (a claim it can't pass on as a hint).",
    'export const annotations = { readOnlyHint: true, trustMeHint: true };',
  ),
  'output-schema-array-root.js': richField(
    'An outputSchema whose root is not an object schema.',
    "export const outputSchema = { type: 'array' };",
  ),
  'output-schema-async.js': richField(
    'An outputSchema marked $async (its validator would return a promise).',
    "export const outputSchema = { type: 'object', $async: true };",
  ),
  'output-schema-invalid.js': richField(
    'An outputSchema that is not valid JSON Schema.',
    "export const outputSchema = { type: 'object', properties: { a: { type: 'bogus' } } };",
  ),
  'input-schema-camel.js': richField(
    'Declares inputSchema (the MCP name) instead of parameterSchema.',
    "export const inputSchema = { type: 'object' };",
    '',
  ),
  'input-schema-snake.js': richField(
    'Declares input_schema (the Messages API name) instead of parameterSchema.',
    "export const input_schema = { type: 'object' };",
    '',
  ),
  'decl-schema-string.js': refused(
    'Its parameterSchema is a string, not a schema object.',
    'A schema that is a string',
    "export const parameterSchema = 'object';",
  ),
  'decl-schema-root-objekt.js': refused(
    'Its parameterSchema has a misspelt root type ("objekt").',
    'A schema whose root type is not "object"',
    "export const parameterSchema = { type: 'objekt' };",
  ),
  'decl-schema-invalid.js': refused(
    'Its parameterSchema has the right root but does not compile (a property of type "objekt").',
    'A schema that does not compile',
    "export const parameterSchema = { type: 'object', properties: { where: { type: 'objekt' } } };",
  ),
  'decl-schema-function.js': refused(
    'Its parameterSchema contains a function (not plain data).',
    'A schema with a function inside',
    "export const parameterSchema = {\n  type: 'object',\n  properties: { when: { type: 'string', default: () => new Date().toISOString() } },\n};",
  ),
  'decl-schema-proxy.js': refused(
    'Its parameterSchema is a Proxy (not plain data).',
    'A schema that is a Proxy',
    "export const parameterSchema = new Proxy({ type: 'object' }, {});",
  ),
  'decl-name-bad-chars.js': refused(
    'Its name has characters the API does not accept (a space and a "!").',
    'A tool with an invalid name',
    OBJECT_PARAMETERS,
    "'get weather!'",
  ),
  'decl-name-65-chars.js': refused(
    "Its name is 65 characters long, one over the API's limit.",
    'A tool whose name is too long',
    OBJECT_PARAMETERS,
    "'n'.repeat(65)",
  ),
};

/** The files of every generated family, e.g. for a suite that walks one. */
export const GENERATED_MODULES: readonly string[] = Object.keys(VARIANTS);

let folder: string | undefined;

function sourceOf(file: string, variant: Variant): string {
  const name = variant.name ?? `'${file.replace(/\.js$/, '').replaceAll('-', '_')}'`;
  return [
    `// ${variant.why}`,
    `export const name = ${name};`,
    `export const description = '${variant.description}';`,
    variant.declaration,
    'export function run() {',
    variant.run,
    '}',
    '',
  ].join('\n');
}

/** Writes every variant once per test process; the folder goes when the process exits. */
function generated(): string {
  if (folder !== undefined) return folder;
  const made = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-fixtures-')));
  mkdirSync(made, { recursive: true });
  // The modules are ES modules, as under fixtures/ (whose package.json says so).
  writeFileSync(join(made, 'package.json'), '{ "type": "module" }\n');
  for (const [file, variant] of Object.entries(VARIANTS))
    writeFileSync(join(made, file), sourceOf(file, variant));
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  folder = made;
  return made;
}

/** Whether `file` is one of the generated modules rather than a file under fixtures/. */
export function isGeneratedModule(file: string): boolean {
  return Object.hasOwn(VARIANTS, file);
}

/** The real path of the generated module `file` (written on first use). */
export function generatedModule(file: string): string {
  if (!isGeneratedModule(file)) throw new Error(`no generated module named ${file}`);
  return join(generated(), file);
}
