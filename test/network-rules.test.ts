/**
 * The egress proxy's rules and address checks, as pure functions: what a manifest or a grant may
 * say, what a rule matches, which addresses are refused however they are spelled, and what a grant
 * of a package that asks for hosts allows.
 */
import { describe, expect, it } from 'vitest';
import { canonicalAddress, refusedAddress } from '../dist/src/process/network/addresses.js';
import { grantAllows, networkGrant } from '../dist/src/process/network/grant.js';
import { normalHost, parseNetRule, ruleMatches } from '../dist/src/process/network/rules.js';

const rule = (text: string) => {
  const parsed = parseNetRule(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.rule;
};

describe('network rules', () => {
  it.each([
    ['api.weather.gov', 'api.weather.gov', 443, true],
    ['api.weather.gov', 'API.Weather.gov.', 80, true],
    ['api.weather.gov', 'api.weather.gov', 8443, false],
    ['api.weather.gov', 'evil.api.weather.gov', 443, false],
    ['*.example.com:443', 'a.b.example.com', 443, true],
    ['*.example.com:443', 'example.com', 443, false],
    ['*.example.com:443', 'evilexample.com', 443, false],
    ['*.example.com:443', 'a.example.com', 80, false],
    ['10.0.0.5:8080', '10.0.0.5', 8080, true],
    ['[fd00::1]:443', '[FD00:0::1]', 443, true],
    ['::ffff:10.0.0.5', '10.0.0.5', 80, true],
  ])('%s matches %s on port %i: %s', (text, host, port, matches) => {
    expect(ruleMatches(rule(text), normalHost(host) ?? '', port)).toBe(matches);
  });

  it.each([
    ['', '"" is not a host name'],
    ['*.com', '"*.com" is a wildcard over a top-level domain'],
    ['api.*.com', '"api.*.com" is not a host name (ASCII letters, digits, - and .; *. only first)'],
    [
      'wéather.example',
      '"wéather.example" is not a host name (ASCII letters, digits, - and .; *. only first)',
    ],
    ['api.weather.gov:0', '"api.weather.gov:0" has a port that is not 1 to 65535'],
    ['[::1', '"[::1" has no closing ]'],
    [42, '42 is not a string'],
    [null, 'null is not a string'],
  ])('%j is refused: %s', (text, reason) => {
    expect(parseNetRule(text)).toEqual({ ok: false, reason });
  });
});

describe('refused addresses', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['64:ff9b::7f00:1', 'a loopback address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['::ffff:169.254.169.254', 'a cloud metadata address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['10.1.2.3', 'a private address'],
    ['172.31.0.1', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['100.64.0.1', 'a private address'],
    ['fd12:3456::1', 'a private address'],
    ['224.0.0.1', 'a multicast or reserved address'],
    ['ff02::1', 'a multicast or reserved address'],
  ])('%s is %s', (address, kind) => {
    expect(refusedAddress(address, new Set())).toBe(kind);
  });

  it('public addresses pass, and one of the host’s own is refused however it is written', () => {
    expect(refusedAddress('8.8.8.8', new Set())).toBeUndefined();
    expect(refusedAddress('2606:4700::1111', new Set())).toBeUndefined();
    const own = new Set([canonicalAddress('203.0.113.9') as string]);
    expect(refusedAddress('::ffff:203.0.113.9', own)).toBe("one of the host's own addresses");
  });
});

describe('what a grant allows', () => {
  const asking = (net: boolean | string[]) => ({ packageName: 'weather-tools', permissions: { net } });

  it('a connection needs a rule of the manifest and of the grant; true on both sides is everything', () => {
    const narrowed = networkGrant(
      { 'weather-tools': ['api.weather.gov'] },
      asking(['api.weather.gov', '*.example.com']),
    );
    expect(grantAllows(narrowed, 'api.weather.gov', 443)).toBe(true);
    expect(grantAllows(narrowed, 'a.example.com', 443)).toBe(false);
    const widened = networkGrant(
      { 'weather-tools': ['*.example.com', 'evil.test'] },
      asking(['a.example.com']),
    );
    expect(grantAllows(widened, 'a.example.com', 443)).toBe(true);
    expect(grantAllows(widened, 'evil.test', 443)).toBe(false);
    expect(networkGrant(true, asking(true))).toEqual({ kind: 'all' });
    expect(networkGrant(['weather-tools'], asking(true))).toEqual({ kind: 'all' });
  });

  it('nothing is granted to a package that does not ask, nor one the host does not name', () => {
    expect(networkGrant(true, asking(false))).toEqual({ kind: 'none', why: 'not-asked' });
    expect(networkGrant(['other-tools'], asking(['api.weather.gov']))).toEqual({
      kind: 'none',
      why: 'not-granted',
    });
    expect(networkGrant({ toString: true }, { packageName: 'toString', permissions: { net: true } })).toEqual(
      {
        kind: 'all',
      },
    );
    expect(networkGrant({}, { packageName: 'toString', permissions: { net: true } })).toEqual({
      kind: 'none',
      why: 'not-granted',
    });
  });
});
