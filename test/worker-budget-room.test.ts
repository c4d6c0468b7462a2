/**
 * Which unit the worker budget ends to make room, and how many at once, on pools the test drives
 * itself (each holds one unit: none, starting, idle, busy or ending) and a clock the test moves: the budget's
 * choices depend on how long ago each pool started a call, and a real clock would make them depend
 * on how loaded the machine is. The host-level behaviour (real workers, real processes) is in
 * worker-budget.test.ts and worker-budget-cap.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  COLD_MS,
  RUN_GRACE_MS,
  RUN_LENGTH,
  RUN_MS,
  SWITCHES_AT_ONCE,
} from '../dist/src/calls/budget-limits.js';
import { WorkerBudget } from '../dist/src/calls/worker-budget.js';
import { OneUnitPool } from './support/one-unit-pool.js';

function budgetOf(limit: number) {
  const clock = { now: 0 };
  const counts: number[] = [];
  const checks: Array<() => void> = [];
  const budget = new WorkerBudget(limit, {
    now: () => clock.now,
    onEvent: (event) => counts.push(event.workers),
    afterTurn: (check) => checks.push(check),
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
    ready(name: string) {
      const target = pool(name);
      expect(target.unit).toBe('starting');
      target.unit = 'busy';
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
    /** The turn of the callers whose calls just answered is over (their next calls are sent). */
    afterTurn() {
      for (const check of checks.splice(0)) check();
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

  it('keeps the unit of a package that started a call less than RUN_GRACE_MS ago, and ends another, while a call runs', () => {
    const host = budgetOf(3);
    host.call('x');
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

  it('with no call running anywhere, a grace keeps nothing: the most recently used idle unit is ended at once', () => {
    const host = budgetOf(2);
    host.call('a');
    host.finish('a');
    host.clock.now = 5;
    host.call('b');
    host.finish('b');
    host.clock.now = 6;
    // Every caller left waits on c: none can send a or b anything before c's call answers.
    host.call('c');
    expect(host.ending()).toEqual([]);
    host.afterTurn();
    expect(host.ending()).toEqual(['b']);
    host.exit('b');
    expect(host.pool('c').unit).toBe('busy');
    host.budget.close();
  });

  it('keeps the idle unit of a package called further apart than RUN_GRACE_MS for twice the time between its calls', () => {
    const host = budgetOf(3);
    // A call runs throughout: no stall voids a grace here.
    host.call('x');
    const pace = 2 * RUN_GRACE_MS;
    for (let index = 0; index < 6; index += 1) {
      host.clock.now = index * pace;
      host.call('a');
      host.finish('a');
    }
    const last = 5 * pace;
    host.clock.now = last + 1;
    host.call('b');
    host.finish('b');
    // Past the floor of a's grace, before its next call is due.
    host.clock.now = last + RUN_GRACE_MS + 5;
    host.call('c');
    expect(host.ending()).toEqual(['b']);
    host.exit('b');
    host.clock.now = last + pace + 1;
    host.call('d');
    expect(host.ending()).toEqual([]);
    // Twice a's pace has passed: its next call did not come, and its unit goes.
    host.clock.now = last + 2 * pace + 1;
    host.budget.changed(host.pool('d'));
    expect(host.ending()).toEqual(['a']);
    host.exit('a');
    expect(host.pool('d').unit).toBe('busy');
    host.budget.close();
  });

  it('a grace at its pace is RUN_MS at most: a package called once a second keeps its idle unit no longer', () => {
    const host = budgetOf(2);
    host.call('x');
    for (let index = 0; index < 6; index += 1) {
      host.clock.now = index * 1000;
      host.call('a');
      host.finish('a');
    }
    host.clock.now = 5000 + RUN_MS - 1;
    host.call('c');
    expect(host.ending()).toEqual([]);
    host.clock.now = 5000 + RUN_MS + 1;
    host.budget.changed(host.pool('c'));
    expect(host.ending()).toEqual(['a']);
    host.exit('a');
    expect(host.pool('c').unit).toBe('busy');
    host.budget.close();
  });

  it('a unit starting is on its way: no stall while it starts (its start serves the calls behind it), and one once it is done', () => {
    const host = budgetOf(2);
    host.pool('s').startsSlowly = true;
    host.call('s');
    expect(host.pool('s').unit).toBe('starting');
    host.call('a');
    host.finish('a');
    host.clock.now = 5;
    host.call('c');
    host.afterTurn();
    // Ending a's unit now would only add a start beside s's on the same cores.
    expect(host.ending()).toEqual([]);
    host.ready('s');
    host.finish('s');
    host.afterTurn();
    expect(host.ending()).toEqual(['a']);
    host.exit('a');
    expect(host.pool('c').unit).toBe('busy');
    host.budget.close();
  });

  it(`while a call runs, ends at most SWITCHES_AT_ONCE (${SWITCHES_AT_ONCE} here) units at once, and the waiting packages start in the order they came`, () => {
    const places = SWITCHES_AT_ONCE + 3;
    const host = budgetOf(places);
    host.call('runs');
    const resident = Array.from({ length: places - 1 }, (_, index) => `r${index}`);
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

  it('with no call running, ends one unit for every waiting package at once, the most recently used first, and they start in the order they came', () => {
    const places = 6;
    const host = budgetOf(places);
    const resident = Array.from({ length: places }, (_, index) => `r${index}`);
    for (const [index, name] of resident.entries()) {
      host.clock.now = index;
      host.call(name);
      host.finish(name);
    }
    host.clock.now = 10;
    const newcomers = ['n0', 'n1', 'n2'];
    for (const name of newcomers) host.call(name);
    host.afterTurn();
    // The units least likely to be called soon by a caller rotating over the packages.
    expect(host.ending().sort()).toEqual(['r3', 'r4', 'r5']);
    expect(host.budget.workers).toBe(places);
    const startOrder: string[] = [];
    for (const name of ['r4', 'r5', 'r3']) {
      host.exit(name);
      expect(host.budget.workers).toBeLessThanOrEqual(places);
      for (const newcomer of newcomers) {
        if (host.pool(newcomer).unit === 'busy' && !startOrder.includes(newcomer)) startOrder.push(newcomer);
      }
    }
    expect(startOrder).toEqual(newcomers);
    expect(Math.max(...host.counts)).toBeLessThanOrEqual(places);
    host.budget.close();
  });

  it('a run counts against the package first in line: a flooding package keeps its unit while another makes room, then yields within a run to the next in line', () => {
    const host = budgetOf(2);
    host.call('r');
    host.finish('r');
    host.pool('a').queue = 10 * RUN_LENGTH;
    host.budget.changed(host.pool('a'));
    host.clock.now = 1000;
    // w1 waits; r is out of its grace and makes room. a floods meanwhile, one call after another.
    host.call('w1');
    expect(host.ending()).toEqual(['r']);
    // Most of a run while w1 waits: that run was w1's to wait out, and w1 has its place next.
    for (let index = 0; index < RUN_LENGTH - 2; index += 1) host.finish('a');
    host.exit('r');
    expect(host.pool('w1').unit).toBe('busy');
    // w2 comes to wait while w1's call and a's calls run: a's run counts from here.
    host.call('w2');
    const startedBefore = host.pool('a').started;
    while (host.pool('a').unit === 'busy') host.finish('a');
    // a had a run of its own against w2 (not the rest of the one w1 waited out: w2 was not held up
    // by another's unit), at most RUN_LENGTH calls, and then its idle unit makes room.
    expect(host.pool('a').started - startedBefore).toBeGreaterThan(RUN_LENGTH / 2);
    expect(host.pool('a').started - startedBefore).toBeLessThanOrEqual(RUN_LENGTH);
    expect(host.ending()).toEqual(['a']);
    host.exit('a');
    expect(host.pool('w2').unit).toBe('busy');
    expect(Math.max(...host.counts)).toBeLessThanOrEqual(2);
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
