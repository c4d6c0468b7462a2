// A JavaScript tool module whose arguments are inferred from its schema through JSDoc alone:
// `ToolDefinition<typeof parameterSchema>` with the schema declared `@type {const}`, and the
// local-identity `defineTool` that `toolhost init` generates (nothing imported at run time).

const parameterSchema = /** @type {const} */ ({
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city'],
  additionalProperties: false,
});

/** @type {import('toolhost/tool').ToolDefinition<typeof parameterSchema>} */
export const forecast = {
  name: 'forecast',
  description: 'The forecast for a city',
  parameterSchema,
  run(args) {
    // @ts-expect-error: a misspelt property is not in the schema
    void args.cty;
    // @ts-expect-error: `days` is optional
    args.days.toFixed();
    return `${args.city.toUpperCase()}: ${args.days ?? 1} days`;
  },
};

/** @type {typeof import('toolhost/tool').defineTool} */
const defineTool = (tool) => tool;

export default defineTool({
  name: 'count_words',
  description: 'Counts the words in a text',
  parameterSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, unique: { type: 'boolean' } },
    required: ['text'],
    additionalProperties: false,
  },
  run({ text, unique = false }) {
    const words = text.split(/\s+/).filter((word) => word !== '');
    return String(unique ? new Set(words).size : words.length);
  },
});

defineTool({
  name: 'misspelt',
  description: 'A wrong property access in a defineTool call',
  parameterSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
  run(args) {
    // @ts-expect-error: not in the schema
    return args.txt;
  },
});
