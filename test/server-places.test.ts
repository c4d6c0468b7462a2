/**
 * MCP servers' places in the worker budget (src/calls/server-places.ts), against the real budget
 * with a pool that reports as the tiers' pools do: a server waits for a place on a full budget and
 * gets the first one freed, the budget ends an idle unit to make room for it (a server's own place
 * is never ended), the last place is never a server's (refused at once, or while waiting once other
 * servers took the places before it), and a place released while asked for is never granted.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetMember, NextStart, WorkerBudgetEvent } from '../dist/src/calls/budget-member.js';
import { type PlaceAnswer, ServerPlaces } from '../dist/src/calls/server-places.js';
import { WorkerBudget } from '../dist/src/calls/worker-budget.js';

/** A pool with idle units only: the budget may end them, and each exits when the test says. */
class IdlePool implements BudgetMember {
  readonly source = 'pool';
  readonly queued = 0;
  readonly resting = true;
  occupied = 0;
  idle = 0;
  ending = 0;
  readonly #budget: WorkerBudget;

  constructor(budget: WorkerBudget, units: number) {
    this.#budget = budget;
    budget.join(this);
    this.occupied = units;
    this.idle = units;
    budget.changed(this);
  }

  nextStart(): NextStart {
    return 'wait';
  }

  startNext(): boolean {
    return false;
  }

  endIdle(): boolean {
    if (this.idle === 0) return false;
    this.idle -= 1;
    this.ending += 1;
    return true;
  }

  /** One unit the budget ended has exited. */
  exitOne(): void {
    this.ending -= 1;
    this.occupied -= 1;
    this.#budget.changed(this);
  }
}

/** A budget on a clock the test moves (`coldAfter`: every unit's last call long past). */
function budgetOf(limit: number) {
  const events: WorkerBudgetEvent[] = [];
  let now = 0;
  const budget = new WorkerBudget(limit, { onEvent: (event) => events.push(event), now: () => now });
  const coldAfter = () => {
    now += 60_000;
  };
  return { budget, places: new ServerPlaces(budget), events, coldAfter };
}

/** The answer, if it has settled by the time everything already queued has run. */
async function settledAnswer(answer: Promise<PlaceAnswer>): Promise<PlaceAnswer | 'pending'> {
  return Promise.race([answer, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('servers in the worker budget', () => {
  it('a server waits on a full budget, an idle unit is ended for it, and it gets the place that frees', async () => {
    const { budget, places, events, coldAfter } = budgetOf(3);
    const pool = new IdlePool(budget, 3);
    coldAfter();
    const place = places.take('config#a');
    expect(await settledAnswer(place.answer)).toBe('pending');
    // The budget ended one idle unit to make room (one at a time on this machine, or more).
    expect(pool.ending).toBeGreaterThan(0);
    pool.exitOne();
    expect(await place.answer).toEqual({ held: true });
    expect(budget.workers).toBe(3);
    expect(places.held).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: 'started', source: 'config#a', workers: 3, limit: 3 });
    place.release();
    expect(budget.workers).toBe(2);
    expect(events.at(-1)).toMatchObject({ type: 'ended', source: 'config#a', count: 1, workers: 2 });
    budget.close();
  });

  it('the last place is never a server’s: refused at once, or while waiting once others took the places before it', async () => {
    const { budget, places, coldAfter } = budgetOf(3);
    const first = places.take('config#first');
    expect(await first.answer).toEqual({ held: true });
    const pool = new IdlePool(budget, 2);
    coldAfter();
    const second = places.take('config#second');
    const third = places.take('config#third');
    expect(await settledAnswer(second.answer)).toBe('pending');
    expect(await settledAnswer(third.answer)).toBe('pending');
    while (pool.ending > 0) pool.exitOne();
    expect(await second.answer).toEqual({ held: true });
    const refused = await third.answer;
    expect(refused.held).toBe(false);
    expect(refused.held === false && refused.reason).toContain(
      "the last of the host's maxWorkers (3) places",
    );
    expect(places.held).toBe(2);
    // Asked now, with two servers running: refused at once.
    const fourth = await places.take('config#fourth').answer;
    expect(fourth).toMatchObject({ held: false });
    // A server gives its place back: another fits again.
    second.release();
    expect(await places.take('config#fifth').answer).toEqual({ held: true });
    expect(budget.workers).toBe(2 + pool.occupied);
    budget.close();
  });

  it('a place released while asked for is never granted, and takes nothing', async () => {
    const { budget, places, events, coldAfter } = budgetOf(2);
    const pool = new IdlePool(budget, 2);
    coldAfter();
    const place = places.take('config#gone');
    expect(await settledAnswer(place.answer)).toBe('pending');
    place.release();
    expect(await place.answer).toMatchObject({ held: false });
    while (pool.ending > 0) pool.exitOne();
    expect(events.some((event) => event.source === 'config#gone')).toBe(false);
    expect(places.held).toBe(0);
    expect(budget.workers).toBe(pool.occupied);
    budget.close();
  });
});
