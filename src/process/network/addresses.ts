/**
 * Which addresses the egress proxy refuses to connect to unless a grant names them: the host's own
 * (loopback, unspecified, every address of its interfaces), link-local, cloud metadata services,
 * private and shared ranges, multicast and reserved space. Addresses are compared as bytes, and an
 * IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by that
 * IPv4 address too: `::ffff:127.0.0.1` is loopback however it is spelled.
 */

import { networkInterfaces } from 'node:os';
import { isIP } from './ip-family.js';

/** Why an address is refused, as the proxy's message says it (`resolves to 10.0.0.5, a private address`). */
export type AddressClass =
  | 'a loopback address'
  | 'an unspecified address'
  | 'a link-local address'
  | 'a cloud metadata address'
  | 'a private address'
  | 'a multicast or reserved address'
  | "one of the host's own addresses";

interface Range {
  bytes: number[];
  prefix: number;
  class: AddressClass;
}

const V4: Array<[string, number, AddressClass]> = [
  // Metadata first: it sits inside link-local and says more.
  ['169.254.169.254', 32, 'a cloud metadata address'],
  ['169.254.170.2', 32, 'a cloud metadata address'], // ECS task metadata
  ['100.100.100.200', 32, 'a cloud metadata address'], // Alibaba Cloud
  ['168.63.129.16', 32, 'a cloud metadata address'], // Azure wire server
  ['0.0.0.0', 8, 'an unspecified address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['10.0.0.0', 8, 'a private address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.168.0.0', 16, 'a private address'],
  ['100.64.0.0', 10, 'a private address'], // carrier-grade NAT
  ['192.0.0.0', 24, 'a private address'], // IETF protocol assignments
  ['198.18.0.0', 15, 'a private address'], // benchmarking
  ['224.0.0.0', 4, 'a multicast or reserved address'],
  ['240.0.0.0', 4, 'a multicast or reserved address'],
];
const V6: Array<[string, number, AddressClass]> = [
  ['fd00:ec2::254', 128, 'a cloud metadata address'], // AWS IMDS over IPv6
  ['fd20:ce::254', 128, 'a cloud metadata address'], // Google Cloud
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['fe80::', 10, 'a link-local address'],
  ['fc00::', 7, 'a private address'], // unique local
  ['fec0::', 10, 'a private address'], // site-local (deprecated, still routed on some networks)
  ['ff00::', 8, 'a multicast or reserved address'],
  ['100::', 64, 'a multicast or reserved address'], // discard-only
];

/** The refused ranges as bytes, made on the first address judged (not when the host is built). */
let ranges: Range[] | undefined;

function refusedRanges(): Range[] {
  ranges ??= [
    ...V4.map(([text, prefix, kind]) => ({
      bytes: bytesOf(text) as number[],
      prefix: prefix + 96,
      class: kind,
    })),
    ...V6.map(([text, prefix, kind]) => ({ bytes: bytesOf(text) as number[], prefix, class: kind })),
  ].map((range) =>
    // IPv4 ranges are kept as IPv4-mapped IPv6 ranges: one comparison for both families.
    range.bytes.length === 4 ? { ...range, bytes: mapped(range.bytes) } : range,
  );
  return ranges;
}

/**
 * Why `address` is refused, or undefined for an ordinary public address. `own` is the host's own
 * addresses ({@link hostAddresses}), canonical.
 */
export function refusedAddress(address: string, own: ReadonlySet<string>): AddressClass | undefined {
  const bytes = bytesOf(address);
  if (bytes === undefined) return 'a multicast or reserved address';
  const full = bytes.length === 4 ? mapped(bytes) : bytes;
  for (const candidate of [full, ...embeddedV4(full).map(mapped)]) {
    for (const range of refusedRanges()) if (inRange(candidate, range)) return range.class;
    if (own.has(canonical(candidate))) return "one of the host's own addresses";
  }
  return undefined;
}

/** An address in one spelling per address (IPv4 dotted, IPv6 as 8 hex groups), to compare. */
export function canonicalAddress(address: string): string | undefined {
  const bytes = bytesOf(address);
  return bytes === undefined ? undefined : canonical(bytes.length === 4 ? mapped(bytes) : bytes);
}

/** The host's own addresses, canonical (read when a proxy starts: interfaces change rarely). */
export function hostAddresses(): Set<string> {
  const own = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      const address = canonicalAddress(entry.address.split('%')[0] ?? '');
      if (address !== undefined) own.add(address);
    }
  }
  return own;
}

function canonical(bytes: number[]): string {
  const v4 = isMapped(bytes) ? bytes.slice(12) : undefined;
  if (v4 !== undefined) return v4.join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) {
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  }
  // The longest run of two or more zero groups is written `::` (RFC 5952), as people write them.
  let best = { start: -1, length: 1 };
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === '0') length++;
    if (length > best.length) best = { start, length };
  }
  if (best.start < 0) return groups.join(':');
  const head = groups.slice(0, best.start).join(':');
  const tail = groups.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

function isMapped(bytes: number[]): boolean {
  return bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function mapped(v4: number[]): number[] {
  return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4];
}

/** The IPv4 addresses an IPv6 address carries (beyond the mapped form, judged as itself). */
function embeddedV4(bytes: number[]): number[][] {
  const found: number[][] = [];
  const startsWith = (prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
  // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::/96, 64:ff9b:1::/48).
  if (bytes.slice(0, 12).every((byte) => byte === 0)) found.push(bytes.slice(12));
  if (startsWith([0, 0x64, 0xff, 0x9b])) found.push(bytes.slice(12));
  // 6to4 (2002:aabb:ccdd::/48).
  if (startsWith([0x20, 0x02])) found.push(bytes.slice(2, 6));
  // Teredo (2001:0::/32): the client's address, inverted, in the last 32 bits.
  if (startsWith([0x20, 0x01, 0, 0])) found.push(bytes.slice(12).map((byte) => byte ^ 0xff));
  return found;
}

function inRange(bytes: number[], range: Range): boolean {
  let bits = range.prefix;
  for (let index = 0; index < 16 && bits > 0; index++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[index] ?? 0) & mask) !== ((range.bytes[index] ?? 0) & mask)) return false;
  }
  return true;
}

/** An address as 4 (IPv4) or 16 (IPv6) bytes; undefined when it is not one. */
function bytesOf(address: string): number[] | undefined {
  const family = isIP(address);
  if (family === 4) return address.split('.').map(Number);
  if (family !== 6) return undefined;
  let text = address.split('%')[0] ?? '';
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...restGroups];
  const bytes = groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : undefined;
}
