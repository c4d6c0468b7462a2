/**
 * The one way toolhost bounds how much runs at once: `mapLimit` for a list known up front (snapshot
 * files, a turn's tool calls, selftests), `Gate` for work that arrives over time (declaration reads).
 */

/**
 * `map` over `items`, at most `limit` at once, the results in the items' order. Once `signal` aborts
 * no further item starts (their results stay empty); the running ones finish.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && signal?.aborted !== true) {
      const index = next++;
      results[index] = await map(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}

/** At most `limit` holders at once; the others wait their turn, first come first served. */
export class Gate {
  readonly #limit: number;
  #holders = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves when this caller holds the gate; pair every `enter` with one `leave`. */
  async enter(): Promise<void> {
    if (this.#holders >= this.#limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#holders += 1;
  }

  /** Hands the gate to the next waiting caller, or frees a place. */
  leave(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#holders -= 1;
    else next();
  }
}
