/**
 * The richer declaration fields, all optional: `title`, `annotations` (the tool's own claims) and
 * `outputSchema` (checked with the same bounded Ajv setup as `parameterSchema`). A malformed one
 * leaves the tool out with its reason; a schema declared under another API's name gets a "did you
 * mean" reason. A declared outputSchema holds for every structured result, on the host, in every
 * tier: one that breaks it, or a result that is not structured, is TOOL_BAD_RESULT.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedModule } from './support/generated-modules.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';

const makeHost = useHosts();
const declaration = (file: string) =>
  fileURLToPath(new URL(`../fixtures/declarations/${file}`, import.meta.url));

/** Each malformed module, the code it is left out with, and its reason (after where: `file:line:column: `). */
const MALFORMED: Array<[string, string, string]> = [
  ['title-number.js', 'DECLARATION_INVALID', 'title must be a string of 1 to 256 characters, got 42'],
  [
    'title-too-long.js',
    'DECLARATION_INVALID',
    `title must be a string of 1 to 256 characters, got "${'T'.repeat(76)}...`,
  ],
  ['title-throws.js', 'DECLARATION_THREW', 'title threw: no title today'],
  [
    'annotations-unknown-hint.js',
    'DECLARATION_INVALID',
    'annotations has an unknown hint "trustMeHint"; the hints are readOnlyHint, destructiveHint, idempotentHint, openWorldHint',
  ],
  [
    'annotations-not-boolean.js',
    'DECLARATION_INVALID',
    'annotations.destructiveHint must be a boolean, got "no"',
  ],
  [
    'annotations-array.js',
    'DECLARATION_INVALID',
    'annotations must be an object of boolean hints, got ["readOnlyHint"]',
  ],
  [
    'annotations-not-plain.js',
    'DECLARATION_NOT_PLAIN',
    'annotations is not plain data: annotations is an instance of Hints',
  ],
  [
    'output-schema-array-root.js',
    'DECLARATION_INVALID',
    'outputSchema must have `"type": "object"` at its root',
  ],
  ['output-schema-invalid.js', 'DECLARATION_INVALID', 'outputSchema is not valid JSON Schema: '],
  ['output-schema-async.js', 'DECLARATION_INVALID', 'outputSchema uses `$async` (at outputSchema)'],
  [
    'input-schema-camel.js',
    'DECLARATION_INVALID',
    'parameterSchema is missing and the module declares `inputSchema`: did you mean `parameterSchema`?',
  ],
  [
    'input-schema-snake.js',
    'DECLARATION_INVALID',
    'parameterSchema is missing and the module declares `input_schema`: did you mean `parameterSchema`?',
  ],
];

describe('a malformed richer field leaves the tool out with its reason', () => {
  it.each(MALFORMED)('%s is left out as %s', async (file, code, reason) => {
    const { host } = await makeHost();
    await loadEcho(host);

    const report = await host.load(generatedModule(file));

    const [status] = report.modules;
    expect(status?.state).toBe('left-out');
    expect(status?.code).toBe(code);
    expect(status?.reason?.startsWith(`${file}:`)).toBe(true);
    expect(status?.reason).toContain(`: ${reason}`);
    expect(host.list().map((tool) => tool.name)).toEqual(['echo']);
    await expectHostFine(host);
  });
});

describe.each(['worker', 'strict', 'process'] as const)('richer declarations in the %s tier', (isolation) => {
  it('title, annotations and outputSchema are offered as declared', async () => {
    const { host } = await makeHost({ isolation });
    await host.load(declaration('rich-valid.js'));

    const [tool] = host.list();

    expect(tool).toMatchObject({
      name: 'rich_valid',
      title: 'City temperature',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      outputSchema: {
        type: 'object',
        properties: { celsius: { type: 'number' }, city: { type: 'string' } },
        required: ['celsius', 'city'],
        additionalProperties: false,
      },
    });
  });

  it('a structured result that matches the outputSchema is answered with its structuredContent', async () => {
    const { host } = await makeHost({ isolation });
    await host.load(declaration('rich-valid.js'));

    expect(await host.call('rich_valid', { give: 'structured' })).toStrictEqual({
      content: [{ type: 'text', text: 'Oslo: 21.5 °C' }],
      isError: false,
      structuredContent: { celsius: 21.5, city: 'Oslo' },
    });
    expect(await host.call('rich_valid', { give: 'object' })).toStrictEqual({
      content: [{ type: 'text', text: '{"celsius":3,"city":"Bergen"}' }],
      isError: false,
      structuredContent: { celsius: 3, city: 'Bergen' },
    });
  });

  it('a result that breaks the outputSchema, or is not structured, is TOOL_BAD_RESULT and the next call is fine', async () => {
    const { host } = await makeHost({ isolation });
    await loadEcho(host);
    await host.load(declaration('rich-valid.js'));

    const mismatch = await host.call('rich_valid', { give: 'mismatch' });
    expect(mismatch.isError).toBe(true);
    expect(mismatch.error?.code).toBe('TOOL_BAD_RESULT');
    expect(mismatch.error?.message).toBe(
      "the tool's structured result does not match its outputSchema: the result must NOT have additional properties (wind); /celsius must be number",
    );
    expect(mismatch.structuredContent).toBeUndefined();

    const taggedMismatch = await host.call('rich_valid', { give: 'structured mismatch' });
    expect(taggedMismatch.error?.message).toBe(
      "the tool's structured result does not match its outputSchema: the result must have required property 'city'; /celsius must be number",
    );

    const prose = await host.call('rich_valid', { give: 'prose' });
    expect(prose.error).toStrictEqual({
      code: 'TOOL_BAD_RESULT',
      message:
        'the tool declares an outputSchema but returned no structured result (a JSON object, or structured(...))',
    });

    const errorResult = await host.call('rich_valid', { give: 'Atlantis' });
    expect(errorResult.error).toStrictEqual({ code: 'TOOL_ERROR_RESULT', message: 'no such city: Atlantis' });

    expect((await host.call('rich_valid', { give: 'object' })).isError).toBe(false);
    await expectHostFine(host);
  });
});

describe("the host's own tools", () => {
  const schema = { type: 'object' } as const;

  it('take the same fields, checked when registered, and their structured results are checked too', async () => {
    const { host } = await makeHost();
    host.register({
      name: 'host_temperature',
      description: 'The temperature',
      title: 'Temperature',
      annotations: { readOnlyHint: true },
      parameterSchema: { type: 'object', properties: { broken: { type: 'boolean' } } },
      outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
      run: (args) => (args['broken'] === true ? { celsius: 'hot' } : { celsius: 20 }),
    });

    expect(host.list()[0]).toMatchObject({ title: 'Temperature', annotations: { readOnlyHint: true } });
    expect((await host.call('host_temperature', {})).structuredContent).toStrictEqual({ celsius: 20 });
    expect((await host.call('host_temperature', { broken: true })).error).toStrictEqual({
      code: 'TOOL_BAD_RESULT',
      message: "the tool's structured result does not match its outputSchema: /celsius must be number",
    });
  });

  it('a malformed field is refused when registered, with its reason', async () => {
    const { host } = await makeHost();
    expect(() =>
      host.register({
        name: 'host_claims',
        description: 'Claims too much',
        parameterSchema: schema,
        annotations: { readOnlyHint: 'yes' } as never,
        run: () => 'ok',
      }),
    ).toThrow('Tool "host_claims": annotations.readOnlyHint must be a boolean, got "yes"');
    expect(() =>
      host.register({
        name: 'host_output',
        description: 'Outputs a list',
        parameterSchema: schema,
        outputSchema: { type: 'array' },
        run: () => 'ok',
      }),
    ).toThrow('Tool "host_output": outputSchema must have `"type": "object"` at its root');
    expect(host.list()).toEqual([]);
  });
});
