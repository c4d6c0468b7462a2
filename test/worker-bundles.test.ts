/**
 * The worker entries are built as one file each (scripts/bundle.mjs): a declaration read, a call
 * worker and a package process's calls start without Node's module loader resolving and reading
 * toolhost's files one by one (and a package process holds less). Checked on the build output: the
 * only module of toolhost's own an entry imports is the running call, which stays a module of its
 * own. The root entry is built the same way,
 * with its lazily loaded parts in files beside it.
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
    ['workers/call/process-calls.js', ['./active-call.js']],
  ])("%s imports no file of toolhost's but %j", async (entry, own) => {
    const imports = await staticImports(entry);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((specifier) => !specifier.startsWith('node:'))).toEqual(own);
  });
});

describe('the root entry as built', () => {
  it("imports no file of toolhost's but the bundle's own parts beside it", async () => {
    const imports = await staticImports('src/index.js');
    const own = imports.filter((specifier) => specifier.startsWith('.'));
    expect(imports.length).toBeGreaterThan(0);
    for (const specifier of own) expect(specifier).toMatch(/^\.\/bundle-[\w-]+\.js$/);
  });

  it('loads the tool-use loop, the process tier and MCP servers (the client) from parts of their own, on first use', async () => {
    const source = await readFile(new URL('src/index.js', dist), 'utf8');
    const lazy = [...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1] ?? '');
    expect(lazy.filter((specifier) => specifier.startsWith('.')).sort()).toEqual([
      expect.stringMatching(/^\.\/bundle-load-servers-[\w-]+\.js$/),
      expect.stringMatching(/^\.\/bundle-process-domains-[\w-]+\.js$/),
      expect.stringMatching(/^\.\/bundle-run-tools-[\w-]+\.js$/),
    ]);
  });
});
