import { describe, expect, it } from 'vitest';
import { ToolHost, type ToolHostOptions } from '../dist/src/index.js';

describe('ToolHost options', () => {
  it.each<[Record<string, unknown>, string]>([
    [{ callHeapMb: -5 }, 'Expected `callHeapMb` to be a positive integer, got -5'],
    [{ readTimeoutMs: 1.5 }, 'Expected `readTimeoutMs` to be a positive integer, got 1.5'],
    [{ maxThreadsPerPool: 0 }, 'Expected `maxThreadsPerPool` to be a positive integer, got 0'],
    [{ maxWorkers: 0 }, 'Expected `maxWorkers` to be a positive integer, got 0'],
    [{ maxWorkers: 2.5 }, 'Expected `maxWorkers` to be a positive integer, got 2.5'],
    [{ outputBudgetBytes: '32k' }, 'Expected `outputBudgetBytes` to be a positive integer, got "32k"'],
    [{ timeoutGraceMs: -1 }, 'Expected `timeoutGraceMs` to be a non-negative integer, got -1'],
    [
      { rereadDelaysMs: 'soon' },
      'Expected `rereadDelaysMs` to be an array of non-negative integers, got "soon"',
    ],
    [
      { rereadDelaysMs: [60_000, -1] },
      'Expected `rereadDelaysMs` to be an array of non-negative integers, got [60000,-1]',
    ],
    [{ clock: 42 }, 'Expected `clock` to be an object with `now()` and `sleep(ms, signal)`'],
    [{ envAllowList: 'HOME' }, 'Expected `envAllowList` to be an array of variable names'],
    [{ isolation: 'vm' }, `Expected \`isolation\` to be one of 'worker', 'strict', 'process', got "vm"`],
    [
      { allowNetwork: 5 },
      'Expected `allowNetwork` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got 5',
    ],
    [
      { allowNetwork: 'weather-tools' },
      'Expected `allowNetwork` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got "weather-tools"',
    ],
    [
      { allowNetwork: ['weather-tools', 7] },
      'Expected `allowNetwork` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got ["weather-tools",7]',
    ],
    [
      { allowNetwork: [''] },
      'Expected `allowNetwork` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got [""]',
    ],
    [
      { allowNetwork: { 'weather-tools': ['api.weather.gov', 'evil host'] } },
      'Expected `allowNetwork` of "weather-tools" to list hosts: "evil host" is not a host name (ASCII letters, digits, - and .; *. only first)',
    ],
    [
      { allowNetwork: { 'weather-tools': 'api.weather.gov' } },
      'Expected `allowNetwork` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got {"weather-tools":"api.weather.gov"}',
    ],
    [{ maxNetworkConnections: 0 }, 'Expected `maxNetworkConnections` to be a positive integer, got 0'],
    [{ maxNetworkBytesPerCall: 1.5 }, 'Expected `maxNetworkBytesPerCall` to be a positive integer, got 1.5'],
    [
      { networkTesting: { hosts: { 'api.test': '127.0.0.1' } } },
      'Expected `networkTesting.hosts` to map host names to arrays of addresses',
    ],
  ])('rejects %j when the host is built, with an exact message', (options, message) => {
    expect(() => new ToolHost(options as ToolHostOptions)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message }),
    );
  });

  it('accepts every option at a valid value, and nothing is started until a load or call', async () => {
    const host = new ToolHost({
      callHeapMb: 64,
      callStackMb: 2,
      readHeapMb: 32,
      readTimeoutMs: 1000,
      rereadDelaysMs: [0, 10],
      clock: { now: () => 0, sleep: async () => {} },
      timeoutGraceMs: 0,
      maxThreadsPerPool: 1,
      idleTimeoutMs: 10,
      outputBudgetBytes: 100,
      maxResultBytes: 1000,
      maxLogChars: 10,
      allowAddons: false,
      maxConcurrentSelftests: 1,
      isolation: 'worker',
      envAllowList: ['HOME'],
      allowNetwork: ['weather-tools'],
    });
    expect(host.list()).toEqual([]);
    expect(host.status()).toEqual([]);
    await host.close();
  });

  it('rejects a bad isolation tier given to load, and a selftest or call timeout that is not a positive integer', async () => {
    const host = new ToolHost();
    try {
      await expect(host.load('.', { isolation: 'none' as 'worker' })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
      });
      await expect(host.selftest([], { timeoutMs: 0 })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        message: 'Expected `timeoutMs` to be a positive integer, got 0',
      });
      for (const timeoutMs of [0, -5, 1.5, Number.NaN, '100'] as unknown as number[]) {
        await expect(host.call('anything', {}, { timeoutMs })).rejects.toMatchObject({
          code: 'INVALID_OPTION',
          message: expect.stringMatching(/^Expected `timeoutMs` to be a positive integer, got /),
        });
      }
    } finally {
      await host.close();
    }
  });
});
