/**
 * The snapshots' content-addressed store: one read-only copy of each distinct file content, named
 * by its SHA-256. A package's own files are copied here (never linked: an editor or `writeFile`
 * rewrites a file in place, and a hard link to the original would change with it), and snapshot
 * folders hard-link to the copies, so a version that shares a file with the one before costs a
 * directory entry, not another copy.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** Files up to this size are read whole: hashed first, written only when their content is new. */
const WHOLE_FILE_BYTES = 1024 * 1024;

export class FileStore {
  readonly #folder: string;
  #made: Promise<unknown> | undefined;

  constructor(folder: string) {
    this.#folder = folder;
  }

  /**
   * Copies `source` into the store (unless its content is there already) and returns its hash.
   * The hash is of the bytes copied, in the same pass, so a file changing meanwhile can't make a
   * copy that doesn't match its name.
   */
  async place(source: string, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const info = await stat(source);
    if (info.size <= WHOLE_FILE_BYTES) return this.placeContent(await readFile(source, { signal }));
    await this.#ensureFolder();
    // A large file: one pass to hash, and a copying pass only when the content is new.
    const known = await hashStream(source, signal);
    if (await this.#has(known)) return known;
    const temporary = this.#temporaryName();
    const hash = createHash('sha256');
    await pipeline(
      createReadStream(source),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(temporary),
      { signal },
    );
    return this.#settle(temporary, hash.digest('hex'));
  }

  /** Stores `content` (a file the snapshot makes itself) and returns its hash. */
  async placeContent(content: Buffer | string): Promise<string> {
    const hash = createHash('sha256').update(content).digest('hex');
    if (await this.#has(hash)) return hash;
    await this.#ensureFolder();
    const temporary = this.#temporaryName();
    await writeFile(temporary, content);
    return this.#settle(temporary, hash);
  }

  /** Hard-links the stored copy `hash` at `destination`; false when the copy was collected meanwhile. */
  async linkTo(hash: string, destination: string): Promise<boolean> {
    try {
      await link(join(this.#folder, hash), destination);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  /**
   * Removes the copies among `hashes` that no snapshot links any more (a link count of one: only
   * the store's own name). A snapshot being built that wanted one of them finds it gone and copies
   * the file again ({@link linkTo} says so).
   */
  async collect(hashes: Iterable<string>): Promise<void> {
    await Promise.all(
      [...new Set(hashes)].map(async (hash) => {
        const path = join(this.#folder, hash);
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.nlink <= 1) await unlink(path).catch(() => {});
      }),
    );
  }

  async #has(hash: string): Promise<boolean> {
    return (await stat(join(this.#folder, hash)).catch(() => undefined)) !== undefined;
  }

  async #settle(temporary: string, hash: string): Promise<string> {
    const final = join(this.#folder, hash);
    if (await this.#has(hash)) {
      // Keep the copy snapshots already link to; this one is the same bytes.
      await unlink(temporary).catch(() => {});
    } else {
      // Read-only: a tool (or a person) writing through a snapshot's link gets refused, unless root.
      await chmod(temporary, 0o444);
      await rename(temporary, final);
    }
    return hash;
  }

  #ensureFolder(): Promise<unknown> {
    this.#made ??= mkdir(this.#folder, { recursive: true });
    return this.#made;
  }

  #temporaryName(): string {
    return join(this.#folder, `.tmp-${randomBytes(6).toString('hex')}`);
  }
}

async function hashStream(path: string, signal: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(
    createReadStream(path),
    async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) hash.update(chunk);
    },
    { signal },
  );
  return hash.digest('hex');
}
