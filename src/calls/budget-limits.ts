/**
 * The worker budget's fixed numbers (its policy is in worker-budget.ts): how long a run is, how
 * long a grace, when an idle unit is cold, and how many units are ended at once to make room.
 */
import { availableParallelism } from 'node:os';

/** Calls a pool may start on the units it has while another pool waits for a place (its run). */
export const RUN_LENGTH = 64;
/**
 * How long a run may go on starting calls, counted from when the pool first in line came to wait:
 * with calls slower than a unit's start, a waiting pool waits for about this long, not for
 * RUN_LENGTH slow calls of each pool ahead of it.
 */
export const RUN_MS = 500;
/**
 * How long a pool in its run keeps an idle unit while it has no call waiting, at least (its grace
 * is twice the time between its calls, up to RUN_MS: budget-runs.ts): long enough for a caller that
 * spreads its calls over packages to send the next, short enough that a pool that is done holds no
 * place a waiting pool needs.
 */
export const RUN_GRACE_MS = 50;
/**
 * How long since a pool last started a call before its idle unit is *cold*. Cold units are ended
 * least recently used first (the package that has gone quiet); units used more recently than this,
 * most recently used first: a caller that spreads calls evenly over more packages than there are
 * places calls the least recently used package next, so ending that one turns every call into a
 * unit's start (the bench's 50 packages on 40 places: 940 starts for 1,000 calls), where ending
 * the one just used keeps the rest in place and lets the few that take turns collect calls.
 */
export const COLD_MS = 10_000;
/**
 * Units ended at once to make room while calls run, at most: a unit's start is CPU-bound, so
 * starting more at once than there are cores makes each slower, and each package switched out by
 * a burst of room-making while its callers are busy soon waits for a place of its own. Packages
 * left waiting collect calls meanwhile, so that each start pays for more of them. At a stall one
 * is ended for each package waiting (see the top of this file).
 */
export const SWITCHES_AT_ONCE = Math.max(1, Math.floor(availableParallelism() / 2));
