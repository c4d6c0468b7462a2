/** How the guards pin what they replace: a tool can neither undo it nor call past it. */
const defineProperty = Object.defineProperty;
const SafeTypeError = TypeError;

export type AnyFunction = (...args: unknown[]) => unknown;

/** Defines `target[key]` as `value`, for good: not writable, not configurable, not enumerable. */
export function lock(target: object, key: PropertyKey, value: unknown): void {
  defineProperty(target, key, { value, writable: false, configurable: false, enumerable: false });
}

/** A constructor that refuses to construct, naming `what`. */
export function refusedConstructor(what: string): () => never {
  return () => {
    throw new SafeTypeError(`toolhost: ${what} is refused inside tool workers`);
  };
}
