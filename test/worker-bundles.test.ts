/**
 * The worker entries are built as one file each (scripts/bundle-workers.mjs): a declaration read
 * and a call worker start without Node's module loader resolving and reading toolhost's files one
 * by one. Checked on the build output: the only module of toolhost's own either entry imports is
 * the call worker's running call, which stays a module of its own.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);

/** The specifiers of a built file's static imports. */
async function staticImports(path: string): Promise<string[]> {
  const source = await readFile(new URL(path, dist), 'utf8');
  return [...source.matchAll(/^import\s[^;]*?\sfrom\s+["']([^"']+)["'];?$/gm)].map((match) => match[1] ?? '');
}

describe('the worker entries as built', () => {
  it.each([
    ['workers/read-declaration.js', []],
    ['workers/call/call-worker.js', ['./active-call.js']],
  ])("%s imports no file of toolhost's but %j", async (entry, own) => {
    const imports = await staticImports(entry);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((specifier) => !specifier.startsWith('node:'))).toEqual(own);
  });
});
