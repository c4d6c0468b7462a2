// A JavaScript tool module typed through JSDoc only (checked by `npm run typecheck` with checkJs):
// `@type {import('toolhost/tool').ToolModule}` checks the declaration and types `ctx`; `args` are
// JSON objects.

/** @type {import('toolhost/tool').ToolModule} */
export default {
  name: 'shout',
  description: 'Upper-cases a text',
  parameterSchema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  },
  timeoutMs: 2000,
  run(args, ctx) {
    ctx.emit({ stage: 'shouting' });
    // @ts-expect-error: a JSON value may be a number, so it needs a check first
    args.text.toUpperCase();
    return typeof args.text === 'string' ? args.text.toUpperCase() : '';
  },
  async selftest(ctx) {
    // @ts-expect-error: ctx has no such field
    void ctx.tmpDirectory;
  },
};

/** @type {import('toolhost/tool').ToolModule} */
export const wrongShape = {
  name: 'wrong',
  description: 'A declaration with a mistake',
  parameterSchema: { type: 'object' },
  // @ts-expect-error: concurrency is "parallel" or "exclusive"
  concurrency: 'serial',
  run() {},
};
