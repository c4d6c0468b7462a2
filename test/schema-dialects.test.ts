/**
 * The drafts a schema may be written in: 2020-12 by default, draft-07 when its `$schema` says so,
 * with http:// (what zod-to-json-schema writes) or https://; either way a schema that breaks its
 * draft's meta-schema is refused with the place and the rule.
 */
import { describe, expect, it } from 'vitest';
import { compileParameterSchema, DEFAULT_SCHEMA_LIMITS } from '../dist/src/schema/json-schema.js';

describe.each([
  'http://json-schema.org/draft-07/schema#',
  'https://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
])('a schema declaring $schema %s', ($schema) => {
  it('compiles, with draft-07 rules (a tuple in items)', () => {
    const compiled = compileParameterSchema(
      {
        $schema,
        type: 'object',
        properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
      },
      DEFAULT_SCHEMA_LIMITS,
    );
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    expect(compiled.validate({ pair: ['a', 1] })).toBe(true);
    expect(compiled.validate({ pair: [1, 'a'] })).toBe(false);
  });

  it('is refused when it breaks the draft-07 meta-schema, naming where', () => {
    const refused = compileParameterSchema(
      { $schema, type: 'object', properties: { a: { type: 5 } } },
      DEFAULT_SCHEMA_LIMITS,
    );
    expect(refused).toMatchObject({ ok: false });
    expect(refused.ok ? '' : refused.message).toContain('schema/properties/a/type');
  });
});
