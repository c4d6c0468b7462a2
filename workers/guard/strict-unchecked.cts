/**
 * Required by strict-preload.cts, so in strict workers only: the Node APIs that make or open files
 * in native code, past the permission model's checks, are refused (an attack on strict found both).
 *
 * - `fs.cpSync`: on Node 22 and later it copies in native code and makes the symbolic links it
 *   copies (`fs.symlink` itself is refused under the permission model). A tool copied a link of its
 *   own snapshot into its tmp folder, deeper, and climbed out through it with `..`, which the
 *   permission model reads as text (22.23.5, 24.22.3, 26.12.1). `fs.cp` and `fs.promises.cp` go
 *   through the checked calls, and stay (under strict's grants they are refused anyway, reading the
 *   folders above the destination). Node 20's `cpSync` is JavaScript over the checked calls; it is
 *   refused all the same, so strict behaves alike on every line.
 * - `node:sqlite` (Node 22 and later): SQLite opens its files itself, so a database path,
 *   `ATTACH DATABASE`, `VACUUM INTO` and `backup` read and write anywhere the host's user can. Every
 *   function it exports is replaced by one that refuses, before any tool can import it.
 *
 * Everything used here is taken now, before any tool code can replace it.
 */
import fs = require('node:fs');
import moduleApi = require('node:module');
import refusals = require('./strict-refusals.cjs');

const defineProperty = Object.defineProperty;
const keys = Object.keys;
const { pathOf, refusal } = refusals;

fs.cpSync = function cpSyncRefused(_source: unknown, destination: unknown): void {
  throw refusal('fs.cpSync', pathOf(destination) ?? '');
} as typeof fs.cpSync;

let sqlite: Record<string, unknown> | undefined;
try {
  sqlite = require('node:sqlite') as Record<string, unknown>;
} catch {
  // Node 20 has no SQLite.
}
if (sqlite !== undefined) {
  const refused = function sqliteRefused(): never {
    throw refusal('node:sqlite', '');
  };
  for (const name of keys(sqlite)) {
    if (typeof sqlite[name] !== 'function') continue;
    defineProperty(sqlite, name, { value: refused, enumerable: true, writable: false, configurable: false });
  }
}
// An ES module's `import { cpSync } from 'node:fs'` sees these, whenever it is first imported.
moduleApi.syncBuiltinESMExports();
