/**
 * The packages of section 16 (repeat-runs.mjs, repeat-runs-builds.mjs): tool modules that each
 * import one real library at their top, as real tools do, with a copy of this repository's
 * node_modules, left to settle as an installed package is before its first run.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Each module's name: the library it imports, and how. */
export const LIBRARIES = {
  zod_check: ['zod', `import { z } from 'zod'; const check = z.object({ text: z.string() });`],
  undici_agent: ['undici', `import { Agent } from 'undici'; void Agent;`],
  ajv_compile: ['ajv', `import Ajv from 'ajv'; void Ajv;`],
  piscina_pool: ['piscina', `import { Piscina } from 'piscina'; void Piscina;`],
  retry_once: ['p-retry', `import pRetry from 'p-retry'; void pRetry;`],
  anthropic_client: ['@anthropic-ai/sdk', `import Anthropic from '@anthropic-ai/sdk'; void Anthropic;`],
  property_sample: ['fast-check', `import fc from 'fast-check'; void fc;`],
};

function moduleSource(name, prelude) {
  return `${prelude}
export const name = ${JSON.stringify(name)};
export const description = 'Echoes its text (after importing a real library)';
export const parameterSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export function run({ text }) { return text; }
`;
}

/** A package at `folder` holding the modules `names` (keys of {@link LIBRARIES}). */
export async function writePackage(folder, names) {
  await mkdir(join(folder, 'tools'), { recursive: true });
  const dependencies = Object.fromEntries(names.map((name) => [LIBRARIES[name][0], '*']));
  const manifest = {
    name: `repeat-${names.length}`,
    type: 'module',
    private: true,
    dependencies,
    toolhost: { tools: names.map((name) => `./tools/${name}.js`) },
  };
  await writeFile(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const name of names)
    await writeFile(join(folder, 'tools', `${name}.js`), moduleSource(name, LIBRARIES[name][1]));
  await cp(join(REPO, 'node_modules'), join(folder, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
}

/**
 * Waits until files just written are settled. A file is known by its identity only once it was
 * left alone for two seconds: until then the store neither reuses its copy nor keeps a dependency
 * tree holding it (src/snapshot/kept-trees.ts). Copies just made must be as settled as an
 * installed package is before the first run.
 */
export function settle() {
  return new Promise((resolve) => setTimeout(resolve, 2100));
}
