/**
 * Generates a tool package of `count` distinct modules (each with its own name, description and
 * parameter schema, like a real package) in a fresh temp folder.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function generatePackage(count) {
  const root = await mkdtemp(join(tmpdir(), 'toolhost-bench-pkg-'));
  const tools = [];
  for (let index = 0; index < count; index += 1) {
    const file = `tool-${String(index).padStart(3, '0')}.js`;
    tools.push(`./${file}`);
    const source = [
      `export const name = 'generated_${index}';`,
      `export const description = 'Generated tool number ${index}: returns its query with a suffix';`,
      'export const parameterSchema = {',
      "  type: 'object',",
      '  properties: {',
      "    query: { type: 'string', minLength: 1 },",
      "    limit: { type: 'integer', minimum: 1, maximum: 100 },",
      "    tags: { type: 'array', items: { type: 'string' } },",
      '  },',
      "  required: ['query'],",
      '  additionalProperties: false,',
      '};',
      `export function run(args) { return args.query + ' #${index}'; }`,
      '',
    ].join('\n');
    await writeFile(join(root, file), source);
  }
  await writeFile(
    join(root, 'package.json'),
    JSON.stringify({ name: 'toolhost-bench-generated', type: 'module', toolhost: { tools } }, null, 2),
  );
  return root;
}
