/**
 * `toolhost serve`'s arguments: what it serves, and for `--http` the address, the bearer token (from
 * the variable `--token-env` names) and the origins it accepts.
 */

import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { HostArgs, HttpAddress, Parsed, ServeArgs } from './args.js';
import { nonEmpty, positiveIntegerOption, stringList, stringOption, type Values } from './option-values.js';

export function serveArgs(
  host: HostArgs,
  dataDir: string | undefined,
  positionals: string[],
  values: Values,
  typed: Parsed['typed'],
  env: Readonly<Record<string, string | undefined>>,
): ServeArgs {
  const watch = stringList(values, 'watch');
  if (positionals.length === 0 && watch.length === 0) throw new UsageError(messages.serveNeedsSource());
  const httpValue = stringOption(values, 'http');
  const http = httpValue === undefined ? undefined : httpAddress(httpValue, typed('http'));
  const tokenEnv = stringOption(values, 'token-env');
  const allowOrigins = stringList(values, 'allow-origin');
  if (http === undefined && tokenEnv !== undefined)
    throw new UsageError(messages.needsHttp(typed('token-env')));
  if (http === undefined && allowOrigins.length > 0) {
    throw new UsageError(messages.needsHttp(typed('allow-origin')));
  }
  let token: string | undefined;
  if (tokenEnv !== undefined) {
    token = nonEmpty(env[tokenEnv]);
    if (token === undefined) throw new UsageError(messages.tokenEnvUnset(typed('token-env'), tokenEnv));
  }
  for (const origin of allowOrigins) {
    if (!isOrigin(origin)) throw new UsageError(messages.notAnOrigin(typed('allow-origin'), origin));
  }
  const positiveInteger = (name: string) => positiveIntegerOption(values, name, typed(name));
  return {
    command: 'serve',
    ...host,
    dataDir,
    paths: positionals,
    watch,
    http,
    token,
    allowOrigins,
    timeoutMs: positiveInteger('timeout'),
    concurrency: positiveInteger('concurrency'),
  };
}

/** `8080`, `127.0.0.1:0`, `[::1]:8080`, `0.0.0.0:8080`, `localhost:3000`. */
export function httpAddress(value: string, typed: string): HttpAddress {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw new UsageError(messages.notHttpAddress(typed, value));
  }
  const host = match[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1';
  return { host, port };
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
