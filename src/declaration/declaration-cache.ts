/**
 * Declarations kept across runs, in the snapshot store: a module read once, whole and well, is not
 * read again by a later `toolhost list`, `call` or `serve` of the same content. An entry is the
 * reader's reply as it crossed (`{ ok: true, declaration }`), keyed by everything the reply depends
 * on: the reader's own code, Node's version, the tier it was read in, the package's content digest
 * and the module's path in it.
 *
 * An entry is untrusted like anything a reader sends: it is read with a size bound and parsed by
 * the same parser as a worker's reply, and what it holds goes through every host-side check a fresh
 * read does (the schema probe, the declaration checks, the lock). One that doesn't parse is read
 * afresh and written again. The cache holds what the store folder holds: a tool that can write
 * the user's files (the `worker` tier) can write here too, as it could the package itself.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseReadReply } from '../boundary/parse-read-reply.js';
import type { ReadOutcome } from '../boundary/protocol.js';
import { workersFile } from '../own-files.js';

// Required rather than imported: on Node 22 and later an ESM import of `node:util` evaluates all of
// its lazy exports, whose colour support reads `process.stderr` (and so loads Node's socket stack)
// in every process that imports toolhost.
const { isDeepStrictEqual } = createRequire(import.meta.url)('node:util') as typeof import('node:util');

/** An entry larger than this is not read (a declaration's fields are bounded far below it). */
const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** Entries unused this long are removed by the next sweep. */
const UNUSED_MS = 30 * 24 * 60 * 60_000;

/** What a module's cached read is keyed by, besides the reader's code and Node's version. */
export interface CacheKey {
  tier: string;
  /** The package's content digest (its snapshot's). */
  content: string;
  /** The module's path in its package. */
  module: string;
  /**
   * The folder this run's snapshot is in (not part of the key): a read that names it (where a
   * field threw, a description built from `import.meta.url`) says something of this run only.
   */
  folder: string;
}

let readerDigest: string | undefined;

/** The reader's own code: a new reader may read the same module differently. */
function readerCode(): string {
  readerDigest ??= createHash('sha256')
    .update(readFileSync(fileURLToPath(workersFile('read-declaration.js'))))
    .digest('hex');
  return readerDigest;
}

export class DeclarationCache {
  readonly #folder: string;
  #swept = false;

  /** `folder`: where the entries live (a folder of the store). */
  constructor(folder: string) {
    this.#folder = folder;
  }

  /** The read kept for `key`, if a well-formed one is there. */
  async get(key: CacheKey): Promise<(ReadOutcome & { state: 'read' }) | undefined> {
    const file = this.#fileOf(key);
    let text: string;
    try {
      const handle = await open(file, 'r');
      try {
        const { size } = await handle.stat();
        if (size > MAX_ENTRY_BYTES) return undefined;
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch {
      return undefined;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = parseReadReply(value);
    if (!parsed.ok || !parsed.reply.ok) return undefined;
    // Used now: the sweep keeps it.
    const now = new Date();
    void utimes(file, now, now).catch(() => {});
    return { state: 'read', declaration: parsed.reply.declaration };
  }

  /**
   * Keeps a read that ended well. Only one that JSON holds exactly (a value JSON would change, an
   * `Infinity` or a `-0`, is read afresh each time rather than read back as something else), and
   * that names nothing of this run (its snapshot's folder, as a path or a URL).
   */
  async set(key: CacheKey, outcome: ReadOutcome & { state: 'read' }): Promise<void> {
    const reply = { ok: true, declaration: outcome.declaration };
    const text = JSON.stringify(reply);
    if (text.length > MAX_ENTRY_BYTES || !isDeepStrictEqual(JSON.parse(text), reply)) return;
    const named = [key.folder, pathToFileURL(key.folder).href].map((form) =>
      JSON.stringify(form).slice(1, -1),
    );
    if (named.some((form) => text.includes(form))) return;
    const file = this.#fileOf(key);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(join(file, '..'), { recursive: true });
      // Whole or not at all, beside other processes writing the same entry.
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, file);
    } catch {
      // A cache that can't be written is only slower.
      await rm(temporary, { force: true }).catch(() => {});
    }
    this.#sweepOnce();
  }

  #fileOf(key: CacheKey): string {
    const name = createHash('sha256')
      .update(JSON.stringify([readerCode(), process.version, key.tier, key.content, key.module]))
      .digest('hex');
    return join(this.#folder, name.slice(0, 2), `${name}.json`);
  }

  /** Once per process, in the background: entries unused for a month go. */
  #sweepOnce(): void {
    if (this.#swept) return;
    this.#swept = true;
    void sweep(this.#folder).catch(() => {});
  }
}

async function sweep(folder: string): Promise<void> {
  const cutoff = Date.now() - UNUSED_MS;
  for (const shard of await readdir(folder)) {
    const shardFolder = join(folder, shard);
    for (const name of await readdir(shardFolder).catch(() => [])) {
      const file = join(shardFolder, name);
      const info = await stat(file).catch(() => undefined);
      if (info !== undefined && info.mtimeMs < cutoff) await rm(file, { force: true }).catch(() => {});
    }
  }
}
