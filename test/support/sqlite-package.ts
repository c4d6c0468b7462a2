/**
 * A tool package that uses better-sqlite3 (a native addon), written into a temp folder with its own
 * node_modules: better-sqlite3's runtime files copied from this repository's (lib/, its compiled
 * binding, and a package.json without its install-time dependency prebuild-install) and bindings,
 * which finds the binding. Two tools: one loads the addon in its call, one at its module's top
 * level (so its declaration read needs addons too).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));
const BINDING = join(MODULES, 'better-sqlite3/build/Release/better_sqlite3.node');

/**
 * Why better-sqlite3 can't be used on this Node, or undefined when it can: npm ci builds its binding
 * from source (.ci/run) for the Node that ran npm, and another major line has another ABI.
 */
export const SQLITE_UNUSABLE = ((): string | undefined => {
  if (!existsSync(BINDING)) return 'its binding was not built (npm ci builds it from source: see .ci/run)';
  try {
    createRequire(import.meta.url)(BINDING);
    return undefined;
  } catch (error) {
    return `its binding does not load on Node ${process.version}: ${String((error as Error).message).split('\n')[0]}`;
  }
})();

const lazyTool = (prefix: string) => `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
export const name = '${prefix}_sum';
export const description = 'sums numbers in an in-memory SQLite table';
export const parameterSchema = {
  type: 'object',
  properties: { values: { type: 'array', items: { type: 'number' } } },
  required: ['values'],
};
export function run({ values }) {
  const Database = require('better-sqlite3');
  const db = new Database(':memory:');
  db.exec('create table t (x real)');
  const insert = db.prepare('insert into t (x) values (?)');
  for (const value of values) insert.run(value);
  const { total } = db.prepare('select sum(x) as total from t').get();
  db.close();
  return String(total);
}
`;

const eagerTool = (prefix: string) => `import { createRequire } from 'node:module';
const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(':memory:');
export const name = '${prefix}_version';
export const description = 'the SQLite version, from a database opened when the module loads';
export const parameterSchema = { type: 'object' };
export function run() {
  return db.prepare('select sqlite_version() as version').get().version;
}
`;

/** Writes the package `name` (its tools named `<prefix>_sum`, `<prefix>_version`) under `root`. */
export function writeSqlitePackage(root: string, name: string, prefix: string): string {
  const folder = join(root, name);
  mkdirSync(join(folder, 'tools'), { recursive: true });
  writeFileSync(
    join(folder, 'package.json'),
    JSON.stringify({
      name,
      type: 'module',
      dependencies: { 'better-sqlite3': '12.9.0' },
      toolhost: { tools: ['./tools/sum.js', './tools/version.js'] },
    }),
  );
  writeFileSync(join(folder, 'tools/sum.js'), lazyTool(prefix));
  writeFileSync(join(folder, 'tools/version.js'), eagerTool(prefix));
  const sqlite = join(folder, 'node_modules/better-sqlite3');
  mkdirSync(join(sqlite, 'build/Release'), { recursive: true });
  cpSync(join(MODULES, 'better-sqlite3/lib'), join(sqlite, 'lib'), { recursive: true });
  cpSync(BINDING, join(sqlite, 'build/Release/better_sqlite3.node'));
  const manifest = JSON.parse(readFileSync(join(MODULES, 'better-sqlite3/package.json'), 'utf8'));
  manifest.dependencies = { bindings: manifest.dependencies.bindings };
  writeFileSync(join(sqlite, 'package.json'), JSON.stringify(manifest));
  for (const dependency of ['bindings', 'file-uri-to-path']) {
    cpSync(join(MODULES, dependency), join(folder, 'node_modules', dependency), { recursive: true });
  }
  return folder;
}
