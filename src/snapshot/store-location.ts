/**
 * Where the snapshot store lives and how large it may grow: the `cacheDir` and `cacheMaxMb` host
 * options, else the `TOOLHOST_CACHE_DIR` and `TOOLHOST_CACHE_MAX_MB` environment variables, else
 * `$XDG_CACHE_HOME/toolhost` (or `~/.cache/toolhost`) and 1024 MB.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import type { StoreSettings } from './snapshot.js';

/** The store's size bound when neither the option nor the environment sets one. */
export const DEFAULT_CACHE_MAX_MB = 1024;

/** The store's settings from the host's options (already checked) and the environment. */
export function storeSettings(
  options: { cacheDir?: string; cacheMaxMb?: number },
  env: NodeJS.ProcessEnv = process.env,
): StoreSettings {
  return {
    folder: resolve(options.cacheDir ?? storeFolderFromEnv(env)),
    maxBytes: (options.cacheMaxMb ?? maxMbFromEnv(env)) * 1024 * 1024,
  };
}

function storeFolderFromEnv(env: NodeJS.ProcessEnv): string {
  const chosen = env['TOOLHOST_CACHE_DIR'];
  if (chosen !== undefined && chosen !== '') return chosen;
  // The XDG base directory rule: a relative XDG_CACHE_HOME is invalid and ignored.
  const xdg = env['XDG_CACHE_HOME'];
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  return join(cache, 'toolhost');
}

function maxMbFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env['TOOLHOST_CACHE_MAX_MB'];
  if (text === undefined || text === '') return DEFAULT_CACHE_MAX_MB;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected the TOOLHOST_CACHE_MAX_MB environment variable to be a positive integer, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}
