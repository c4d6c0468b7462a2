/**
 * Every way a tool module can fail a call (fixtures/modules/call-*.js, or generated ones of the same
 * names), with the outcome it gets: one catalogue, run against every tier (call-faults.test.ts),
 * which must answer each the same way.
 */

export const FAULTS: Array<{ behaviour: string; file: string; name: string; code: string; message: string }> =
  [
    {
      behaviour: 'throws an Error',
      file: 'call-throw-error.js',
      name: 'call_throw_error',
      code: 'TOOL_THREW',
      message: 'the weather service is down',
    },
    {
      behaviour: 'throws null',
      file: 'call-throw-null.js',
      name: 'call_throw_null',
      code: 'TOOL_THREW',
      message: 'the tool threw null',
    },
    {
      behaviour: 'throws undefined',
      file: 'call-throw-undefined.js',
      name: 'call_throw_undefined',
      code: 'TOOL_THREW',
      message: 'the tool threw undefined',
    },
    {
      behaviour: 'throws a string',
      file: 'call-throw-string.js',
      name: 'call_throw_string',
      code: 'TOOL_THREW',
      message: 'out of cheese',
    },
    {
      behaviour: 'throws a plain object',
      file: 'call-throw-object.js',
      name: 'call_throw_object',
      code: 'TOOL_THREW',
      message: 'the tool threw {"status":503,"reason":"busy"}',
    },
    {
      behaviour: 'rejects',
      file: 'call-rejects.js',
      name: 'call_rejects',
      code: 'TOOL_THREW',
      message: 'rejected on purpose',
    },
    {
      behaviour: 'loops forever',
      file: 'call-infinite-loop.js',
      name: 'call_infinite_loop',
      code: 'TOOL_TIMEOUT',
      message: 'tool timed out after 300 ms',
    },
    {
      behaviour: 'blocks forever in Atomics.wait',
      file: 'call-atomics-wait.js',
      name: 'call_atomics_wait',
      code: 'TOOL_TIMEOUT',
      message: 'tool timed out after 300 ms',
    },
    {
      behaviour: 'exhausts the heap',
      file: 'call-heap-bomb.js',
      name: 'call_heap_bomb',
      code: 'TOOL_OUT_OF_MEMORY',
      message: 'the tool ran out of memory (heap limit 128 MB)',
    },
    {
      behaviour: 'recurses until the stack overflows',
      file: 'call-deep-recursion.js',
      name: 'call_deep_recursion',
      code: 'TOOL_STACK_OVERFLOW',
      message: 'Maximum call stack size exceeded',
    },
    {
      behaviour: 'calls process.exit',
      file: 'call-exit.js',
      name: 'call_exit',
      code: 'TOOL_EXITED',
      message: 'the tool called process.exit(3)',
    },
    {
      behaviour: 'returns a function',
      file: 'call-returns-function.js',
      name: 'call_returns_function',
      code: 'TOOL_BAD_RESULT',
      message: "the tool returned a function, which can't be sent to the model",
    },
    {
      behaviour: 'returns a symbol',
      file: 'call-returns-symbol.js',
      name: 'call_returns_symbol',
      code: 'TOOL_BAD_RESULT',
      message: "the tool returned a symbol, which can't be sent to the model",
    },
    {
      behaviour: 'returns a Proxy',
      file: 'call-returns-proxy.js',
      name: 'call_returns_proxy',
      code: 'TOOL_BAD_RESULT',
      message: "the tool returned a Proxy, which can't be sent to the model",
    },
    {
      behaviour: 'leaves an unhandled rejection behind when it returns',
      file: 'call-unhandled-rejection.js',
      name: 'call_unhandled_rejection',
      code: 'TOOL_UNHANDLED_REJECTION',
      message: 'unhandled rejection: nobody caught me',
    },
    {
      behaviour: 'calls process.kill(process.pid)',
      file: 'call-process-kill.js',
      name: 'call_process_kill',
      code: 'TOOL_THREW',
      message: 'process.kill is not available to tools in toolhost',
    },
  ];
