/** toolhost's own version, from its package.json (read once, when asked). */
import { readFileSync } from 'node:fs';
import { PACKAGE_JSON } from '../own-files.js';

let version: string | undefined;

export function packageVersion(): string {
  version ??= String((JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown }).version);
  return version;
}
