/**
 * Modules whose declarations are bad in one way each (fixtures/modules/decl-*.js), with the code and
 * reason they are left out for: one catalogue, read in every tier (declarations-left-out.test.ts),
 * which must leave each out the same way.
 */

/**
 * `at`: where the reason says it happened, relative to the module's folder (it starts the reason):
 * where it threw, where the field at fault is defined, or the module's file when nothing says more.
 */
export const LEFT_OUT: Array<{ behaviour: string; file: string; at: string; code: string; reason: string }> =
  [
    {
      behaviour: 'a name that throws',
      file: 'decl-name-throws.js',
      at: 'decl-name-throws.js:3:9',
      code: 'DECLARATION_THREW',
      reason: 'name threw: no name today',
    },
    {
      behaviour: 'a getter that exhausts the heap',
      file: 'decl-getter-heap-bomb.js',
      at: 'decl-getter-heap-bomb.js',
      code: 'DECLARATION_OUT_OF_MEMORY',
      reason: 'reading the declaration ran out of memory (heap limit 64 MB)',
    },
    {
      behaviour: 'process.exit at top level',
      file: 'decl-top-level-exit.js',
      at: 'decl-top-level-exit.js',
      code: 'DECLARATION_EXITED',
      reason: 'the module exited (code 5) before its declaration was read',
    },
    {
      behaviour: 'a schema that is a string',
      file: 'decl-schema-string.js',
      at: 'decl-schema-string.js:4:14',
      code: 'DECLARATION_INVALID',
      reason: 'parameterSchema must be a JSON Schema object, got a string',
    },
    {
      behaviour: 'a schema whose root type is "objekt"',
      file: 'decl-schema-root-objekt.js',
      at: 'decl-schema-root-objekt.js:4:14',
      code: 'DECLARATION_INVALID',
      reason: 'parameterSchema must have `"type": "object"` at its root',
    },
    {
      behaviour: 'a schema that does not compile (a property of type "objekt")',
      file: 'decl-schema-invalid.js',
      at: 'decl-schema-invalid.js:4:14',
      code: 'DECLARATION_INVALID',
      reason:
        'parameterSchema is not valid JSON Schema: schema/properties/where/type must be equal to one of the allowed values, schema/properties/where/type must be array, schema/properties/where/type must match a schema in anyOf',
    },
    {
      behaviour: 'a schema that contains a function',
      file: 'decl-schema-function.js',
      at: 'decl-schema-function.js:4:14',
      code: 'DECLARATION_NOT_PLAIN',
      reason: 'parameterSchema is not plain data: parameterSchema.properties.when.default is a function',
    },
    {
      behaviour: 'a schema that is a Proxy',
      file: 'decl-schema-proxy.js',
      at: 'decl-schema-proxy.js:4:14',
      code: 'DECLARATION_NOT_PLAIN',
      reason: 'parameterSchema is not plain data: parameterSchema is a Proxy',
    },
    {
      behaviour: 'a name with characters the API does not accept',
      file: 'decl-name-bad-chars.js',
      at: 'decl-name-bad-chars.js:2:14',
      code: 'DECLARATION_INVALID',
      reason: 'name must match ^[a-zA-Z0-9_-]{1,64}$, got "get weather!"',
    },
    {
      behaviour: 'a 65-character name',
      file: 'decl-name-65-chars.js',
      at: 'decl-name-65-chars.js:2:14',
      code: 'DECLARATION_INVALID',
      reason: `name must match ^[a-zA-Z0-9_-]{1,64}$, got "${'n'.repeat(65)}"`,
    },
    {
      behaviour: 'no run function',
      file: 'decl-no-run.js',
      at: 'decl-no-run.js',
      code: 'DECLARATION_INVALID',
      reason: 'the module exports no run function',
    },
  ];
