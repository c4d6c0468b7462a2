import { describe, expect, it } from 'vitest';
import type { CallTask } from '../dist/src/boundary/protocol.js';
import { Pipeline, type Pipelined } from '../dist/src/calls/pipeline.js';
import type { TrackedWorker } from '../dist/src/calls/thread-reaper.js';

// The claims between the host and a worker, with the worker's side played here: it starts a queued
// call only if it swaps the call's ticket for its negation, as workers/call/queue.ts does.
class Call implements Pipelined {
  readonly task = { claim: undefined } as unknown as CallTask;
  attempt = 0;
  answered = false;
  worker: TrackedWorker | undefined;
  begun = 0;
  queued(worker: TrackedWorker): void {
    this.worker = worker;
  }
  begin(): void {
    this.begun += 1;
  }
}

const worker = { threadId: 1 } as TrackedWorker;

function pipeline(slots = 2) {
  const reruns: Call[] = [];
  const skips: Array<[Call, number]> = [];
  const line = new Pipeline<Call>(slots, {
    rerun: (call) => reruns.push(call),
    skipping: (call, _worker, change) => skips.push([call, change]),
  });
  const cells = new Int32Array(line.buffer);
  /** The worker's side: true if it may start the call. */
  const workerStarts = (call: Call): boolean => {
    const claim = call.task.claim as [number, number];
    return Atomics.compareExchange(cells, claim[0], claim[1], -claim[1]) === claim[1];
  };
  return { line, reruns, skips, workerStarts };
}

describe('claims on queued calls', () => {
  it('a call the host takes back never starts on its worker, and runs again', () => {
    const { line, reruns, skips, workerStarts } = pipeline();
    const ahead = new Call();
    const call = new Call();
    expect(line.queue(call, ahead, worker)).toBe(true);
    expect(line.withdraw(call, true)).toBe(true);
    expect(workerStarts(call)).toBe(false);
    expect(reruns).toEqual([call]);
    expect(skips).toEqual([[call, 1]]);
    expect(line.size).toBe(0);
  });

  it('a call its worker started stays there: taking it back fails, and it begins', () => {
    const { line, reruns, workerStarts } = pipeline();
    const ahead = new Call();
    const call = new Call();
    line.queue(call, ahead, worker);
    expect(workerStarts(call)).toBe(true);
    expect(line.withdraw(call, true)).toBe(false);
    expect(call.begun).toBe(1);
    expect(reruns).toEqual([]);
  });

  it('a call begun after the call ahead replied can still be taken back until its worker starts it', () => {
    const { line, reruns, workerStarts } = pipeline();
    const ahead = new Call();
    const call = new Call();
    line.queue(call, ahead, worker);
    line.aheadLeft(ahead, true);
    expect(call.begun).toBe(1);
    // Its worker ended before it made its exchange: the call never ran there.
    expect(line.withdraw(call, true)).toBe(true);
    expect(workerStarts(call)).toBe(false);
    expect(reruns).toEqual([call]);
  });

  it('a call begun after the call ahead replied, once its worker started it, is not taken back', () => {
    const { line, reruns, workerStarts } = pipeline();
    const ahead = new Call();
    const call = new Call();
    line.queue(call, ahead, worker);
    line.aheadLeft(ahead, true);
    expect(workerStarts(call)).toBe(true);
    expect(line.withdraw(call, true)).toBe(false);
    expect(reruns).toEqual([]);
  });

  it('the call ahead ended: the call behind it runs elsewhere', () => {
    const { line, reruns, workerStarts } = pipeline();
    const ahead = new Call();
    const call = new Call();
    line.queue(call, ahead, worker);
    line.aheadLeft(ahead, false);
    expect(workerStarts(call)).toBe(false);
    expect(reruns).toEqual([call]);
    expect(call.begun).toBe(0);
  });

  it('a call whose task left while still queued (a reply forged for it) can no longer start', () => {
    const { line, reruns, workerStarts } = pipeline(1);
    const ahead = new Call();
    const call = new Call();
    line.queue(call, ahead, worker);
    line.settled(call);
    expect(workerStarts(call)).toBe(false);
    expect(line.size).toBe(0);
    // Its slot is free again, and the call ahead's leaving starts nothing.
    line.aheadLeft(ahead, true);
    expect(call.begun).toBe(0);
    expect(reruns).toEqual([]);
    expect(line.queue(new Call(), new Call(), worker)).toBe(true);
  });

  it('holds a slot per queued call until its task has left, and queues nothing when all are out', () => {
    const { line, workerStarts } = pipeline(2);
    const calls = [new Call(), new Call()];
    const aheads = [new Call(), new Call()];
    expect(line.queue(calls[0] as Call, aheads[0] as Call, worker)).toBe(true);
    expect(line.queue(calls[1] as Call, aheads[1] as Call, worker)).toBe(true);
    expect(line.queue(new Call(), new Call(), worker)).toBe(false);
    // The first begins in place: its slot stays out until its task has left.
    line.aheadLeft(aheads[0] as Call, true);
    expect(workerStarts(calls[0] as Call)).toBe(true);
    expect(line.queue(new Call(), new Call(), worker)).toBe(false);
    line.settled(calls[0] as Call);
    expect(line.queue(new Call(), new Call(), worker)).toBe(true);
  });

  it('never hands out a ticket a task may still hold', () => {
    const { line } = pipeline(1);
    const seen = new Set<number>();
    for (let round = 0; round < 1000; round += 1) {
      const call = new Call();
      line.queue(call, new Call(), worker);
      const ticket = (call.task.claim as [number, number])[1];
      expect(ticket).toBeGreaterThan(0);
      expect(seen.has(ticket)).toBe(false);
      seen.add(ticket);
      line.withdraw(call);
    }
  });
});
