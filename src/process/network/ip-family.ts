/**
 * `isIP`, with `node:net` loaded on its first use. The host's network rules are parsed when a host
 * is built, but only a rule that names an address needs `isIP`; `node:net` brings Node's whole socket
 * stack (streams included), several milliseconds of every `import('toolhost')` that never asks.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let netIsIP: ((input: string) => number) | undefined;

/** 4 or 6 for an IPv4 or IPv6 address, else 0 (as `net.isIP`). */
export function isIP(input: string): number {
  netIsIP ??= (require('node:net') as typeof import('node:net')).isIP;
  return netIsIP(input);
}
