/**
 * Schemas written with a schema library: a `parameterSchema` or `outputSchema` that implements
 * Standard JSON Schema (a zod 4 schema itself, or zod's `z.toJSONSchema()` output, which carries a
 * non-enumerable `~standard`) is converted in the throwaway reader and checked as plain JSON Schema
 * on the host, which is all the model reads; a Standard Schema that can't be converted is left out
 * saying what to export instead. In every tier.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IsolationTier, ToolHost } from '../dist/src/index.js';
import { freshDir } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { installFromRepo } from './support/package-files.js';

const TOOLS: Record<string, string> = {
  'zod-object.js': `import { z } from 'zod';
export const name = 'forecast';
export const description = 'the forecast for a city';
export const parameterSchema = z.object({ city: z.string().describe('the city'), days: z.number().int().min(1).max(7).optional() });
export const outputSchema = z.object({ city: z.string(), summary: z.string() });
export function run({ city }) { return \`sunny in \${city}\`; }
`,
  'zod-json.js': `import { z } from 'zod';
export const name = 'converted';
export const description = 'a schema converted with z.toJSONSchema';
export const parameterSchema = z.toJSONSchema(z.object({ text: z.string() }));
export function run({ text }) { return text; }
`,
  'no-json-schema.js': `export const name = 'opaque';
export const description = 'a Standard Schema with no JSON Schema';
export const parameterSchema = { '~standard': { version: 1, vendor: 'valibot', validate: (value) => ({ value }) } };
export function run() { return 'never'; }
`,
  'converter-throws.js': `export const name = 'broken';
export const description = 'a Standard JSON Schema whose conversion throws';
export const parameterSchema = { '~standard': { version: 1, vendor: 'home-made', validate: (value) => ({ value }),
  jsonSchema: { input() { throw new Error('no JSON Schema for this one'); }, output() { return {}; } } } };
export function run() { return 'never'; }
`,
};

describe.each<IsolationTier>(['worker', 'strict', 'process'])(
  "isolation: '%s', a schema library's schema",
  (isolation) => {
    const tmp = freshDir(`toolhost-standard-schema-${isolation}`);
    let root: string;
    let host: ToolHost;

    beforeAll(async () => {
      root = join(tmp.path, 'schema-tools');
      mkdirSync(join(root, 'tools'), { recursive: true });
      writeFileSync(
        join(root, 'package.json'),
        JSON.stringify({
          name: 'schema-tools',
          type: 'module',
          dependencies: { zod: '4.6.7' },
          toolhost: { tools: Object.keys(TOOLS).map((file) => `./tools/${file}`) },
        }),
      );
      for (const [file, source] of Object.entries(TOOLS)) writeFileSync(join(root, 'tools', file), source);
      await installFromRepo(root, ['zod']);
      root = realpathSync(root);
      host = new ToolHost({ isolation, logger: recordingLogger(), dataDir: join(tmp.path, 'data') });
      await host.load(root);
    });
    afterAll(async () => {
      await host?.close();
      tmp.remove();
    });

    const status = (file: string) => host.status().find((entry) => entry.path === join(root, 'tools', file));

    it('a zod schema is offered as the plain JSON Schema it converts to, and calls are checked against it', async () => {
      const forecast = host.list().find((tool) => tool.name === 'forecast');
      expect(forecast?.parameterSchema).toMatchObject({
        type: 'object',
        properties: {
          city: { type: 'string', description: 'the city' },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city'],
      });
      expect(forecast?.outputSchema).toMatchObject({
        type: 'object',
        properties: { city: { type: 'string' }, summary: { type: 'string' } },
      });
      // Plain data all the way: nothing of zod's objects is left in what the model reads.
      expect(JSON.parse(JSON.stringify(forecast?.parameterSchema))).toEqual(forecast?.parameterSchema);
      expect(Object.getOwnPropertyNames(forecast?.parameterSchema)).not.toContain('~standard');

      const invalid = await host.call('forecast', { city: 'Oslo', days: 9 });
      expect(invalid.error?.code).toBe('INVALID_INPUT');
    });

    it("z.toJSONSchema()'s output, with its non-enumerable ~standard, is offered and runs", async () => {
      expect(status('zod-json.js')).toMatchObject({ state: 'offered', name: 'converted' });
      const converted = host.list().find((tool) => tool.name === 'converted');
      expect(converted?.parameterSchema).toMatchObject({
        type: 'object',
        properties: { text: { type: 'string' } },
      });
      expect((await host.call('converted', { text: 'hi' })).content).toEqual([{ type: 'text', text: 'hi' }]);
    });

    it('a Standard Schema without a JSON Schema is left out saying what to export instead', () => {
      expect(status('no-json-schema.js')).toMatchObject({ state: 'left-out', code: 'DECLARATION_NOT_PLAIN' });
      expect(status('no-json-schema.js')?.reason).toContain(
        'parameterSchema is not plain data: it is a Standard Schema (vendor "valibot") that does not implement Standard JSON Schema',
      );
      expect(status('no-json-schema.js')?.reason).toContain('@valibot/to-json-schema');
    });

    it("a conversion that throws is the field's throw, and the rest of the package is offered", async () => {
      expect(status('converter-throws.js')).toMatchObject({ state: 'left-out', code: 'DECLARATION_THREW' });
      expect(status('converter-throws.js')?.reason).toContain(
        'parameterSchema threw: no JSON Schema for this one',
      );
      expect(
        host
          .list()
          .map((tool) => tool.name)
          .sort(),
      ).toEqual(['converted', 'forecast']);
    });
  },
);
