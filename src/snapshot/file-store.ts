/**
 * The snapshots' content-addressed store, kept across runs under the user's cache folder:
 *
 *   <cache>/files/<2 hex>/<sha256>     one read-only copy of each distinct file content
 *   <cache>/trees/<key>-<bytes>.json   what one dependency tree or version used: path -> sha256
 *
 * Files are copied *from* a package into the store and never linked to the package, so loading
 * leaves every file of the package as it was (its inode's link count and change time included).
 * Everything appears by rename, so another process never sees half a file; a copy or a record that
 * is gone (pruned, or the whole folder removed mid-run) only means copying the file again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import {
  copyFile,
  link,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** Files up to this size are read whole: hashed first, written only when their content is new. */
const WHOLE_FILE_BYTES = 1024 * 1024;
/** A record larger than this is not one the store wrote: it is ignored. */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;
const HASH = /^[0-9a-f]{64}$/;
/** A record's file name: its key (the fingerprint it was made for) and the bytes of the copies it names. */
export const RECORD_NAME = /^([0-9a-z-]{1,80})-(\d{1,15})\.json$/;

/** Marks a recorded copy whose file was too fresh to be known by its identity: never reused. */
export const UNSETTLED = 'unsettled:';

/**
 * What a dependency tree or a version used: its files' paths and the hashes of their copies
 * ({@link UNSETTLED} before the hash of one that must be read again next time).
 */
export type StoreRecord = Record<string, string>;

export class FileStore {
  /** The store's own folder (holds `files/` and `trees/`). */
  folder: string;
  #files: string;
  #trees: string;
  readonly #fallback: string;
  /** Bytes of the copies this process added: only a store that grew needs pruning. */
  #addedBytes = 0;

  /**
   * @param folder the store, kept across runs
   * @param fallback where copies go instead when `folder` can't be written (a read-only home, a
   *   path through a file): a store of this host alone, removed with its snapshots
   */
  constructor(folder: string, fallback: string) {
    this.folder = folder;
    this.#files = join(folder, 'files');
    this.#trees = join(folder, 'trees');
    this.#fallback = fallback;
  }

  /** Moves to the fallback store when `error` says the store can't be written; false if it can't help. */
  #fellBack(error: unknown): boolean {
    const code = (error as NodeJS.ErrnoException).code;
    if (this.folder === this.#fallback) return false;
    if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM' && code !== 'ENOTDIR' && code !== 'EEXIST')
      return false;
    this.folder = this.#fallback;
    this.#files = join(this.#fallback, 'files');
    this.#trees = join(this.#fallback, 'trees');
    return true;
  }

  get addedBytes(): number {
    return this.#addedBytes;
  }

  /**
   * Copies `source` into the store (unless its content is there already) and returns its hash.
   * The hash is of the bytes copied, in the same pass, so a file changing meanwhile can't make a
   * copy that doesn't match its name.
   */
  place(source: string, signal: AbortSignal): Promise<string> {
    return againIfRemoved(() => this.#place(source, signal));
  }

  async #place(source: string, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const info = await stat(source);
    if (info.size <= WHOLE_FILE_BYTES) return this.#placeContent(await readFile(source, { signal }));
    // A large file: one pass to hash, and a copying pass only when the content is new.
    const known = await hashStream(source, signal);
    if (await this.#has(known)) return known;
    const hash = createHash('sha256');
    const temporary = await this.#writeTemporary(known, (path) =>
      pipeline(
        createReadStream(source),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(path, { mode: 0o444 }),
        { signal },
      ),
    );
    // Hashed again while copied: the name is what the copy holds, even if the file changed between.
    return this.#settle(temporary, hash.digest('hex'), info.size);
  }

  /** Stores `content` (a file read whole, or one the snapshot makes itself) and returns its hash. */
  placeContent(content: Buffer | string): Promise<string> {
    return againIfRemoved(() => this.#placeContent(content));
  }

  async #placeContent(content: Buffer | string): Promise<string> {
    const hash = createHash('sha256').update(content).digest('hex');
    if (await this.#has(hash)) return hash;
    const temporary = await this.#writeTemporary(hash, (path) => writeFile(path, content, { mode: 0o444 }));
    return this.#settle(temporary, hash, Buffer.byteLength(content));
  }

  /**
   * Puts the copy `hash` at `destination`: a hard link (the store's inode, never the package's),
   * or a copy where links can't be made (another file system). False when the copy is gone.
   */
  async linkTo(hash: string, destination: string): Promise<boolean> {
    try {
      await link(this.pathOf(hash), destination);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
    }
    return this.copyTo(hash, destination);
  }

  /**
   * Copies the copy `hash` to `destination` (a reflink where the file system has them), so the
   * destination shares no inode with the store. False when the copy is gone.
   */
  async copyTo(hash: string, destination: string): Promise<boolean> {
    try {
      await copyFile(this.pathOf(hash), destination, constants.COPYFILE_FICLONE);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  pathOf(hash: string): string {
    return join(this.#files, hash.slice(0, 2), hash);
  }

  /**
   * The record kept under `key`, marked as just used (pruning goes by last use), or undefined when
   * there is none or it is not one the store wrote.
   */
  async readRecord(key: string): Promise<StoreRecord | undefined> {
    const names = await readdir(this.#trees).catch(() => [] as string[]);
    const name = names.find((entry) => RECORD_NAME.exec(entry)?.[1] === key);
    if (name === undefined) return undefined;
    const path = join(this.#trees, name);
    try {
      const info = await stat(path);
      if (info.size > MAX_RECORD_BYTES) return undefined;
      const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
      const record: StoreRecord = Object.create(null);
      for (const [rel, hash] of Object.entries(parsed))
        if (typeof hash === 'string' && HASH.test(hash)) record[rel] = hash;
      const now = new Date();
      await utimes(path, now, now).catch(() => {});
      return record;
    } catch {
      // Removed meanwhile, or not JSON: no record, and the files are hashed again.
      return undefined;
    }
  }

  /** Keeps `record` under `key`; `bytes` is what its copies hold (for the size bound). */
  async writeRecord(key: string, record: StoreRecord, bytes: number): Promise<void> {
    const final = join(this.#trees, `${key}-${Math.max(0, Math.round(bytes))}.json`);
    const temporary = join(this.#trees, `.tmp-${randomBytes(6).toString('hex')}`);
    const content = JSON.stringify(record);
    try {
      await writeFile(temporary, content);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
      // The record is only a saving: one that can't be written is left for a later run.
      if (
        !(await mkdir(this.#trees, { recursive: true }).then(
          () => true,
          () => false,
        ))
      )
        return;
      if (
        !(await writeFile(temporary, content).then(
          () => true,
          () => false,
        ))
      )
        return;
    }
    await rename(temporary, final).catch(async (error: NodeJS.ErrnoException) => {
      await unlink(temporary).catch(() => {});
      // The store was removed meanwhile: the record is only a saving, and the next run makes it.
      if (error.code !== 'ENOENT') throw error;
    });
  }

  async #has(hash: string): Promise<boolean> {
    return (await stat(this.pathOf(hash)).catch(() => undefined)) !== undefined;
  }

  /**
   * Runs `write` on a fresh temporary name beside where `hash` goes. The folder is made when
   * missing (the first use, or the store removed mid-run) and the write tried again; a store that
   * can't be written at all gives way to the fallback.
   */
  async #writeTemporary(hash: string, write: (path: string) => Promise<unknown>): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const store = this.#files;
      const folder = join(store, hash.slice(0, 2));
      const temporary = join(folder, `.tmp-${randomBytes(6).toString('hex')}`);
      try {
        await write(temporary);
        return temporary;
      } catch (error) {
        await unlink(temporary).catch(() => {});
        if (attempt >= 4) throw error;
        // Another write already moved this store to the fallback: try there.
        if (this.#files !== store) continue;
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          await mkdir(folder, { recursive: true }).catch((failed: unknown) => {
            if (!this.#fellBack(failed)) throw failed;
          });
        } else if (!this.#fellBack(error)) throw error;
      }
    }
  }

  async #settle(temporary: string, hash: string, bytes: number): Promise<string> {
    // Written read-only (mode 0o444): a tool (or a person) writing through a snapshot's link gets
    // refused, unless root.
    try {
      // Atomic: another process sees no copy or a whole one. Replacing a copy another process has
      // just renamed there is fine: both hold the same bytes, and links keep their own inode.
      await rename(temporary, this.pathOf(hash));
    } catch (error) {
      await unlink(temporary).catch(() => {});
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreRemoved();
      throw error;
    }
    this.#addedBytes += bytes;
    return hash;
  }
}

/** The store's folder went away between a copy's write and its rename (it may be removed any time). */
class StoreRemoved extends Error {}

/** Runs `operation` again, once, when the store was removed under it. */
async function againIfRemoved<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof StoreRemoved)) throw error;
    return operation();
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
