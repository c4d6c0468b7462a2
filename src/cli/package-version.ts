/** toolhost's own version and folder, from its package.json (read once, when asked). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PACKAGE_JSON } from '../own-files.js';

let version: string | undefined;

export function packageVersion(): string {
  version ??= String((JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown }).version);
  return version;
}

/** The folder this toolhost is installed in (where its package.json is). */
export function packageRoot(): string {
  return fileURLToPath(new URL('./', PACKAGE_JSON));
}
