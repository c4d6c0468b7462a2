/**
 * Node's internal bindings, for the guards that patch a native object where every route to it
 * passes. Reached through `process.binding`, taken when this module loads (before hardenWorker
 * removes it from tool code), so a guard needn't load Node's public modules (and make throwaway
 * sockets or a TLS context) only to find the native class behind them: about 8 ms of CPU in every
 * worker's start on Node 20.
 *
 * Each binding is optional. Under the permission model `process.binding` throws; Node 24 and 26 (seen
 * on 24.22.3 and 26.12.1) no longer hand out `crypto`. A guard that gets `undefined` finds the same
 * objects through the public modules.
 */
const processBinding = (process as unknown as { binding?: unknown }).binding;
const apply = Reflect.apply;
const hasOwn = Object.hasOwn;
const quietProcess = process as unknown as { noDeprecation?: boolean | undefined };

/** The internal binding `name`, or `undefined` where this Node or this worker doesn't hand it out. */
export function nodeBinding(name: string): Record<string, unknown> | undefined {
  if (typeof processBinding !== 'function') return undefined;
  // The first `process.binding('crypto')` warns (DEP0111) on the worker's stderr: not ours to show.
  const hadSetting = hasOwn(quietProcess, 'noDeprecation');
  const setting = quietProcess.noDeprecation;
  quietProcess.noDeprecation = true;
  try {
    const binding: unknown = apply(processBinding, process, [name]);
    return typeof binding === 'object' && binding !== null ? (binding as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  } finally {
    if (hadSetting) quietProcess.noDeprecation = setting;
    else delete quietProcess.noDeprecation;
  }
}

/** The prototype of the native class `className` of binding `name`, if both are there. */
export function nativePrototype(name: string, className: string): object | undefined {
  const native = nodeBinding(name)?.[className] as { prototype?: unknown } | undefined;
  const prototype = typeof native === 'function' ? native.prototype : undefined;
  return typeof prototype === 'object' && prototype !== null ? prototype : undefined;
}

/**
 * Whether Node's module `id` (an internal one, such as `internal/crypto/util`) has been loaded in
 * this worker. A Node that doesn't list its loaded modules answers yes: the caller then takes the
 * route that works either way.
 */
export function builtinLoaded(id: string): boolean {
  const loaded = (process as unknown as { moduleLoadList?: unknown }).moduleLoadList;
  if (!Array.isArray(loaded)) return true;
  return loaded.includes(`NativeModule ${id}`);
}
