/**
 * Which unit the worker budget ends to make room, and how many at once, on pools the test drives
 * itself (each holds one unit: none, idle, busy or ending) and a clock the test moves: the budget's
 * choices depend on how long ago each pool started a call, and a real clock would make them depend
 * on how loaded the machine is. The host-level behaviour (real workers, real processes) is in
 * worker-budget.test.ts and worker-budget-cap.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetMember, NextStart } from '../dist/src/calls/budget-member.js';
import { COLD_MS, RUN_GRACE_MS, SWITCHES_AT_ONCE, WorkerBudget } from '../dist/src/calls/worker-budget.js';

/** A pool of at most one unit, as the budget reads it. */
class OneUnitPool implements BudgetMember {
  unit: 'none' | 'idle' | 'busy' | 'ending' = 'none';
  queue = 0;
  started = 0;
  constructor(readonly source: string) {}
  get queued(): number {
    return this.queue;
  }
  get occupied(): number {
    return this.unit === 'none' ? 0 : 1;
  }
  get ending(): number {
    return this.unit === 'ending' ? 1 : 0;
  }
  get idle(): number {
    return this.unit === 'idle' ? 1 : 0;
  }
  get resting(): boolean {
    return this.unit !== 'busy';
  }
  nextStart(): NextStart {
    if (this.unit === 'idle') return 'now';
    return this.unit === 'none' ? 'place' : 'wait';
  }
  startNext(): boolean {
    if (this.queue === 0 || this.unit === 'busy' || this.unit === 'ending') return false;
    this.queue -= 1;
    this.unit = 'busy';
    this.started += 1;
    return true;
  }
  endIdle(): boolean {
    if (this.unit !== 'idle') return false;
    this.unit = 'ending';
    return true;
  }
}

function budgetOf(limit: number) {
  const clock = { now: 0 };
  const counts: number[] = [];
  const budget = new WorkerBudget(limit, {
    now: () => clock.now,
    onEvent: (event) => counts.push(event.workers),
  });
  const pools = new Map<string, OneUnitPool>();
  const pool = (name: string): OneUnitPool => {
    let found = pools.get(name);
    if (found === undefined) {
      found = new OneUnitPool(name);
      pools.set(name, found);
      budget.join(found);
    }
    return found;
  };
  return {
    clock,
    counts,
    budget,
    pool,
    call(name: string) {
      const target = pool(name);
      target.queue += 1;
      budget.changed(target);
    },
    finish(name: string) {
      const target = pool(name);
      expect(target.unit).toBe('busy');
      target.unit = 'idle';
      budget.changed(target);
    },
    exit(name: string) {
      const target = pool(name);
      expect(target.unit).toBe('ending');
      target.unit = 'none';
      budget.changed(target);
    },
    ending: () => [...pools.values()].filter((each) => each.unit === 'ending').map((each) => each.source),
  };
}

describe('the worker budget, making room', () => {
  it('ends the most recently used idle unit when none is cold: a caller rotating over more packages than places keeps the rest in place', () => {
    const host = budgetOf(2);
    host.call('a');
    host.finish('a');
    host.clock.now = 10;
    host.call('b');
    host.finish('b');
    host.clock.now = 10 + RUN_GRACE_MS + 1;
    host.call('c');
    expect(host.ending()).toEqual(['b']);
    host.exit('b');
    expect(host.pool('c').unit).toBe('busy');
    expect(host.pool('a').unit).toBe('idle');
    expect(Math.max(...host.counts)).toBe(2);
    host.budget.close();
  });

  it('ends the least recently used unit first among those idle for COLD_MS', () => {
    const host = budgetOf(2);
    host.call('a');
    host.finish('a');
    host.clock.now = 10;
    host.call('b');
    host.finish('b');
    host.clock.now = 10 + COLD_MS + 1;
    host.call('c');
    expect(host.ending()).toEqual(['a']);
    host.exit('a');
    expect(host.pool('c').unit).toBe('busy');
    host.budget.close();
  });

  it('keeps the unit of a package that started a call less than RUN_GRACE_MS ago, and ends another', () => {
    const host = budgetOf(2);
    host.call('a');
    host.finish('a');
    host.clock.now = RUN_GRACE_MS - 5;
    host.call('b');
    host.finish('b');
    host.clock.now = RUN_GRACE_MS + 1;
    host.call('c');
    expect(host.ending()).toEqual(['a']);
    host.budget.close();
  });

  it(`ends at most SWITCHES_AT_ONCE (${SWITCHES_AT_ONCE} here) units at once, and the waiting packages start in the order they came`, () => {
    const places = SWITCHES_AT_ONCE + 2;
    const host = budgetOf(places);
    const resident = Array.from({ length: places }, (_, index) => `r${index}`);
    for (const [index, name] of resident.entries()) {
      host.clock.now = index;
      host.call(name);
      host.finish(name);
    }
    host.clock.now = 1000;
    const newcomers = Array.from({ length: SWITCHES_AT_ONCE + 2 }, (_, index) => `n${index}`);
    for (const name of newcomers) host.call(name);
    const startOrder: string[] = [];
    while (startOrder.length < newcomers.length) {
      const ending = host.ending();
      expect(ending.length).toBeGreaterThan(0);
      expect(ending.length).toBeLessThanOrEqual(SWITCHES_AT_ONCE);
      host.exit(ending[0] as string);
      for (const name of newcomers) {
        if (host.pool(name).unit === 'busy' && !startOrder.includes(name)) startOrder.push(name);
      }
    }
    expect(startOrder).toEqual(newcomers);
    expect(Math.max(...host.counts)).toBeLessThanOrEqual(places);
    host.budget.close();
  });

  it('under any order of calls, answers and exits it never counts more units than its limit, and every call starts', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 20; round += 1) {
      const host = budgetOf(3);
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      let calls = 0;
      for (let step = 0; step < 400; step += 1) {
        host.clock.now += Math.floor(random() * 40);
        const name = names[Math.floor(random() * names.length)] as string;
        const target = host.pool(name);
        const roll = random();
        if (roll < 0.4) {
          host.call(name);
          calls += 1;
        } else if (target.unit === 'busy') host.finish(name);
        else if (target.unit === 'ending') host.exit(name);
        expect(host.budget.workers).toBeLessThanOrEqual(3);
      }
      // Everything still running answers and everything ending exits, and time passes (the budget's
      // timer at a grace's end is a pass too), until every call has started.
      for (let settle = 0; settle < 10_000; settle += 1) {
        const busy = names.find((name) => host.pool(name).unit === 'busy');
        const ending = names.find((name) => host.pool(name).unit === 'ending');
        const waiting = names.find((name) => host.pool(name).queue > 0);
        host.clock.now += 100;
        if (busy !== undefined) host.finish(busy);
        else if (ending !== undefined) host.exit(ending);
        else if (waiting !== undefined) host.budget.changed(host.pool(waiting));
        else break;
        expect(host.budget.workers).toBeLessThanOrEqual(3);
      }
      const started = names.reduce((sum, name) => sum + host.pool(name).started, 0);
      expect(started).toBe(calls);
      expect(Math.max(0, ...host.counts)).toBeLessThanOrEqual(3);
      host.budget.close();
    }
  });
});
