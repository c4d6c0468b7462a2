/**
 * What `toolhost serve` checks beyond its flags' own values: it serves something, `--token-env`
 * and `--allow-origin` come with `--http`, the bearer token is read from the variable `--token-env`
 * names, and every origin is one a browser sends.
 */

import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { ServeArgs } from './command-line.js';
import { nonEmpty, type Parsed, stringOption } from './option-values.js';

/** `serve`'s arguments from its flags' values (`fields`): the token added, the rules checked. */
export function serveArgs(
  fields: Omit<ServeArgs, 'command' | 'paths' | 'token'>,
  parsed: Parsed,
  env: Readonly<Record<string, string | undefined>>,
): ServeArgs {
  const { positionals, typed } = parsed;
  if (positionals.length === 0 && fields.watch.length === 0)
    throw new UsageError(messages.serveNeedsSource());
  const tokenEnv = stringOption(parsed.values, 'token-env');
  if (fields.http === undefined && tokenEnv !== undefined)
    throw new UsageError(messages.needsHttp(typed('token-env')));
  if (fields.http === undefined && fields.allowOrigins.length > 0) {
    throw new UsageError(messages.needsHttp(typed('allow-origin')));
  }
  let token: string | undefined;
  if (tokenEnv !== undefined) {
    token = nonEmpty(env[tokenEnv]);
    if (token === undefined) throw new UsageError(messages.tokenEnvUnset(typed('token-env'), tokenEnv));
  }
  for (const origin of fields.allowOrigins) {
    if (!isOrigin(origin)) throw new UsageError(messages.notAnOrigin(typed('allow-origin'), origin));
  }
  return { command: 'serve', ...fields, paths: positionals, token };
}

/** `https://app.example` or `http://localhost:5173`: what a browser sends as `Origin`. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}
