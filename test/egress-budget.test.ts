/**
 * The egress proxy's bytes per call, on the proxy itself (in this process, on a real Unix socket and
 * a real local server): how concurrent calls and the time between calls are charged, what is held
 * and closed when a budget runs out, that relaying keeps its memory bounded when the destination
 * takes nothing, and that a connection asked for while no call runs is refused by name.
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BudgetOver, CallBudget, type Link } from '../dist/src/process/network/call-budget.js';
import { startProxy } from '../dist/src/process/network/proxy-server.js';
import { Relay } from '../dist/src/process/network/relay.js';
import { parseNetRules } from '../dist/src/process/network/rules.js';
import { removeDir, tempDir } from './support/tool-packages.js';

function grantedRules(rule: string) {
  const parsed = parseNetRules([rule]);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.rules;
}

function recordingLink() {
  const link = { held: false, destroyed: false };
  const api: Link = {
    hold: () => {
      link.held = true;
    },
    destroy: () => {
      link.destroyed = true;
    },
  };
  return { link, api };
}

function budgetOf(limit: number) {
  const overs: BudgetOver[] = [];
  const budget = new CallBudget({ limit, running: [], onOver: (over) => overs.push(over) });
  return { budget, overs };
}

describe('the bytes a package moves while its calls run', () => {
  it('a call alone is charged its own bytes, and of concurrent calls the oldest runs over first', () => {
    const { budget, overs } = budgetOf(100);
    budget.begin('a');
    expect(budget.charge(60)).toBe(true);
    budget.begin('b');
    expect(budget.charge(30)).toBe(true);
    // a has been charged 110 and b 50: a runs over, and is charged no more.
    expect(budget.charge(20)).toBe(false);
    expect(overs).toEqual([{ taskId: 'a', bytes: 110, limit: 100 }]);
    expect(budget.charge(50)).toBe(true);
    expect(budget.charge(1)).toBe(false);
    expect(overs[1]).toEqual({ taskId: 'b', bytes: 101, limit: 100 });
  });

  it('the open links are held when a call runs over, and closed when it is answered or given back', () => {
    const { budget } = budgetOf(10);
    const first = recordingLink();
    const second = recordingLink();
    budget.add(first.api);
    const removeSecond = budget.add(second.api);
    budget.begin('a');
    expect(budget.charge(11)).toBe(false);
    expect([first.link, second.link]).toEqual([
      { held: true, destroyed: false },
      { held: true, destroyed: false },
    ]);
    budget.cut('a');
    expect([first.link.destroyed, second.link.destroyed]).toEqual([true, true]);
    removeSecond();
    const third = recordingLink();
    budget.add(third.api);
    budget.begin('b');
    expect(budget.charge(11)).toBe(false);
    budget.end('b');
    expect(third.link).toEqual({ held: true, destroyed: true });
  });

  it('between calls the bytes still moving share one budget; over it every link closes at once', () => {
    const { budget, overs } = budgetOf(10);
    const open = recordingLink();
    budget.add(open.api);
    expect(budget.running).toBe(false);
    expect(budget.charge(10)).toBe(true);
    expect(budget.charge(1)).toBe(false);
    expect(open.link).toEqual({ held: false, destroyed: true });
    expect(overs).toEqual([{ bytes: 11, limit: 10 }]);
    // A call gets a budget of its own, and so does the time after it.
    budget.begin('a');
    expect(budget.charge(10)).toBe(true);
    budget.end('a');
    expect(budget.charge(10)).toBe(true);
    expect(overs).toHaveLength(1);
  });

  it('a proxy started again charges the calls it is told are in flight', () => {
    const overs: BudgetOver[] = [];
    const budget = new CallBudget({ limit: 5, running: ['a'], onOver: (over) => overs.push(over) });
    expect(budget.running).toBe(true);
    expect(budget.charge(6)).toBe(false);
    expect(overs).toEqual([{ taskId: 'a', bytes: 6, limit: 5 }]);
  });
});

describe('relaying with backpressure', () => {
  /** A source that always has more, counting what it was asked for. */
  function endless() {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const counts = { produced: 0 };
    const source = new Readable({
      read() {
        counts.produced += chunk.length;
        this.push(chunk);
      },
    });
    return { source, counts };
  }

  /** A destination that takes nothing until `flush()`. */
  function stuck() {
    const pending: Array<() => void> = [];
    const destination = new Writable({
      highWaterMark: 16 * 1024,
      write(_chunk, _encoding, callback) {
        pending.push(callback);
      },
    });
    const flush = () => {
      for (const callback of pending.splice(0)) callback();
    };
    return { destination, flush };
  }

  it('a destination that takes nothing pauses its source: the relay holds a chunk, not the stream', async () => {
    const { source, counts } = endless();
    const { destination } = stuck();
    new Relay({ charge: () => true, destroy: () => {} }).pipe(source, destination);
    await once(source, 'pause');
    expect(source.isPaused()).toBe(true);
    expect(destination.writableLength).toBeLessThanOrEqual(64 * 1024);
    expect(counts.produced).toBeLessThanOrEqual(4 * 64 * 1024);
    source.destroy();
  });

  it('a held relay stays paused when its destination drains, and moves no chunk it was not allowed', async () => {
    const { source } = endless();
    const { destination, flush } = stuck();
    let allowed = 2;
    const relay = new Relay({ charge: () => allowed-- > 0, destroy: () => source.destroy() });
    relay.pipe(source, destination);
    await once(source, 'pause');
    relay.hold();
    const drained = once(destination, 'drain');
    flush();
    await drained;
    expect(source.isPaused()).toBe(true);
    relay.destroy();
    expect(source.destroyed).toBe(true);
  });
});

describe('the proxy between calls', () => {
  let root: string;
  let upstream: Server;
  let port = 0;
  const budget = new CallBudget({ limit: 1024 * 1024, running: [], onOver: () => {} });
  const notes: Array<{ host: string; allowed: boolean; reason?: string }> = [];
  let socketPath: string;

  beforeAll(async () => {
    root = await tempDir('toolhost-egress-budget-');
    upstream = createServer((socket) => socket.end('upstream answered'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    port = (upstream.address() as AddressInfo).port;
    socketPath = join(root, 'proxy.sock');
    await startProxy({
      socketPath,
      policy: {
        packageName: 'p',
        grant: { kind: 'hosts', asked: undefined, granted: grantedRules(`127.0.0.1:${port}`) },
        ownAddresses: new Set(),
        testHosts: undefined,
      },
      limits: {
        maxConnections: 8,
        maxBytesPerConnection: 1024 * 1024,
        maxBytesPerCall: 1024 * 1024,
        idleTimeoutMs: 60_000,
      },
      budget,
      onNote: (note) => notes.push(note),
    });
  });

  afterAll(async () => {
    await new Promise((resolve) => upstream.close(resolve));
    await removeDir(root);
  });

  /** The proxy's first line to `CONNECT 127.0.0.1:port`, and its stated reason. */
  async function ask(): Promise<string> {
    const socket: Socket = connect({ path: socketPath });
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\r\n\r\n')) socket.destroy();
    });
    socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    await once(socket, 'close');
    const reason = /x-toolhost-refusal: ([^\r]*)/i.exec(answer)?.[1];
    const [first = ''] = answer.split('\r\n');
    return reason === undefined ? first : `${first} | ${decodeURIComponent(reason)}`;
  }

  it('refuses a connection while no call runs, allows it while one does, and refuses it again after', async () => {
    const refused = `HTTP/1.1 403 Forbidden | the process isolation tier refused network access to 127.0.0.1:${port} (no call of package p is running)`;
    expect(await ask()).toBe(refused);
    budget.begin('a');
    expect(await ask()).toBe('HTTP/1.1 200 Connection Established');
    budget.end('a');
    expect(await ask()).toBe(refused);
    expect(notes.map((note) => note.allowed)).toEqual([false, true, false]);
    expect(notes[0]?.reason).toBe('no call of package p is running');
  });
});
