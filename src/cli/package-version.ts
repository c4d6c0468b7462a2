/** toolhost's own version, from its package.json (read once, when asked). */
import { readFileSync } from 'node:fs';

let version: string | undefined;

export function packageVersion(): string {
  version ??= String(
    (
      JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
        version?: unknown;
      }
    ).version,
  );
  return version;
}
