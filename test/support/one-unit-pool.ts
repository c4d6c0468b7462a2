/**
 * A pool of at most one unit (none, starting, idle, busy or ending), as the worker budget reads it,
 * for tests that drive the budget themselves (worker-budget-room, worker-budget-rotation).
 */
import type { BudgetMember, NextStart } from '../../dist/src/calls/budget-member.js';

/** A pool of at most one unit, as the budget reads it. */
export class OneUnitPool implements BudgetMember {
  /** `starting`: its call waits for the unit's start (it runs nothing yet). */
  unit: 'none' | 'starting' | 'idle' | 'busy' | 'ending' = 'none';
  queue = 0;
  started = 0;
  /** A new unit starts before its call runs (unit `starting`, until the test says it is ready). */
  startsSlowly = false;
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
    return this.unit !== 'busy' && this.unit !== 'starting';
  }
  nextStart(): NextStart {
    if (this.unit === 'idle') return 'now';
    return this.unit === 'none' ? 'place' : 'wait';
  }
  startNext(): boolean {
    if (this.queue === 0 || (this.unit !== 'idle' && this.unit !== 'none')) return false;
    this.queue -= 1;
    this.unit = this.unit === 'none' && this.startsSlowly ? 'starting' : 'busy';
    this.started += 1;
    return true;
  }
  endIdle(): boolean {
    if (this.unit !== 'idle') return false;
    this.unit = 'ending';
    return true;
  }
}
