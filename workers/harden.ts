/**
 * Runs in every worker before any tool code loads: removes what a tool must not reach in-process.
 * `process.kill(process.pid)` from a worker signals the whole host process, and `process.binding`
 * hands out internal bindings (process and signal wraps) that can do the same, so they go.
 * `process.dlopen` goes too when native addons are off.
 */
export function hardenWorker(options: { allowAddons: boolean }): void {
  const refuse = (what: string) => () => {
    throw new Error(`${what} is not available to tools in toolhost`);
  };
  const target = process as unknown as Record<string, unknown>;
  const removed = ['kill', '_kill', 'binding', '_linkedBinding', '_debugProcess'];
  if (!options.allowAddons) removed.push('dlopen');
  for (const key of removed) {
    if (!(key in target)) continue;
    Object.defineProperty(target, key, {
      value: refuse(`process.${key}`),
      writable: false,
      configurable: false,
      enumerable: false,
    });
  }
}
