/**
 * The snapshot store (src/snapshot/store-location.ts): a folder the host writes package copies to,
 * kept across runs. One it can't write gives way to a store in the host's temp folder, which goes
 * with the host: every run then copies every package again.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { storeSettings } from '../../snapshot/store-location.js';
import type { DoctorCheck } from './check.js';

export async function storeCheck(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  let folder: string;
  try {
    folder = storeSettings({}, env).folder;
  } catch (error) {
    return {
      id: 'store',
      status: 'missing',
      found: error instanceof Error ? error.message : String(error),
      fix: 'set TOOLHOST_CACHE_MAX_MB to a positive integer, or unset it',
      tiers: ['worker', 'strict', 'process'],
    };
  }
  const probe = join(folder, `.doctor-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(folder, { recursive: true });
    await writeFile(probe, '');
    await rm(probe, { force: true });
    return {
      id: 'store',
      status: 'ok',
      found: `the store ${folder} is writable`,
      tiers: ['worker', 'strict', 'process'],
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return {
      id: 'store',
      status: 'note',
      found: `the store ${folder} can't be written (${code}): each host copies packages into its own temp folder instead, again on every run`,
      fix: 'make that folder writable, or point TOOLHOST_CACHE_DIR (the cacheDir option) at a folder you can write',
      tiers: ['worker', 'strict', 'process'],
    };
  }
}
