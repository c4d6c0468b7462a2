/**
 * What the model reads is what a reviewer sees: a declaration holding a control character, a
 * bidirectional control, an invisible formatting character or a Tags character anywhere (the
 * description, a nested property's name, an enum value, a default, a keyword nobody expects) is
 * left out as DECLARATION_INVALID, naming the field, the position and the code point, in every
 * tier. Joiners that scripts and emoji need pass unchanged.
 */
import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IsolationTier, ModuleStatus, ToolHost } from '../dist/src/index.js';
import { ToolHost as Host } from '../dist/src/index.js';
import { freshDir, writePackage } from './support/cli-run.js';
import { expectHostFine, loadEcho, recordingLogger } from './support/host-harness.js';

/** A module whose declaration is `fields` (JS expressions), with a run that answers `ok`. */
function moduleWith(
  name: string,
  fields: { description?: string; parameterSchema?: string; title?: string; outputSchema?: string },
): string {
  const optional = [
    fields.title === undefined ? '' : `export const title = ${fields.title};\n`,
    fields.outputSchema === undefined ? '' : `export const outputSchema = ${fields.outputSchema};\n`,
  ].join('');
  return `${optional}export const name = ${JSON.stringify(name)};
export const description = ${fields.description ?? JSON.stringify(`the ${name} tool`)};
export const parameterSchema = ${fields.parameterSchema ?? "{ type: 'object' }"};
export function run() { return 'ok'; }
`;
}

const s = (value: unknown) => JSON.stringify(value);
const TAGGED = `${'a'.repeat(212)}${[...'AB'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')}`;

/** Each refused class, hidden somewhere else in a declaration. */
const REFUSED = [
  {
    behaviour: 'a Tags character after 212 visible ones in the description',
    description: s(TAGGED),
    reason: 'description[212]: U+E0041 (TAG LATIN CAPITAL LETTER A) is invisible',
  },
  {
    behaviour: 'an ANSI escape in the description',
    description: s('see \u001b[2Jhere'),
    reason: 'description[4]: U+001B (ESCAPE) is a control character',
  },
  {
    behaviour: 'a carriage return in the description',
    description: s('one\r\ntwo'),
    reason: 'description[3]: U+000D (CARRIAGE RETURN) is a control character',
  },
  {
    behaviour: 'a C1 control in an enum value of a property',
    parameterSchema: s({ type: 'object', properties: { unit: { enum: ['c', 'f\u009b'] } } }),
    reason:
      'parameterSchema.properties.unit.enum[1][1]: U+009B (CONTROL SEQUENCE INTRODUCER) is a control character',
  },
  {
    behaviour: 'a right-to-left override in the name of a nested property',
    parameterSchema: s({
      type: 'object',
      properties: { place: { type: 'object', properties: { ['ci\u202Ety']: { type: 'string' } } } },
    }),
    reason:
      'parameterSchema.properties.place.properties key "ci\\u{202E}ty"[2]: U+202E (RIGHT-TO-LEFT OVERRIDE) is a bidirectional control',
  },
  {
    behaviour: 'a first-strong isolate in a description under $defs',
    parameterSchema: s({ type: 'object', $defs: { day: { description: 'a \u2068day' } } }),
    reason:
      'parameterSchema.$defs.day.description[2]: U+2068 (FIRST STRONG ISOLATE) is a bidirectional control',
  },
  {
    behaviour: 'a zero-width space in a default',
    parameterSchema: s({ type: 'object', properties: { city: { type: 'string', default: 'Ber\u200Blin' } } }),
    reason: 'parameterSchema.properties.city.default[3]: U+200B (ZERO WIDTH SPACE) is invisible',
  },
  {
    behaviour: 'a zero-width no-break space in a title',
    parameterSchema: s({ type: 'object', properties: { city: { type: 'string', title: '\uFEFFCity' } } }),
    reason: 'parameterSchema.properties.city.title[0]: U+FEFF (ZERO WIDTH NO-BREAK SPACE) is invisible',
  },
  {
    behaviour: 'a soft hyphen in examples',
    parameterSchema: s({
      type: 'object',
      properties: { city: { type: 'string', examples: ['Paris', 'Ro\u00ADme'] } },
    }),
    reason: 'parameterSchema.properties.city.examples[1][2]: U+00AD (SOFT HYPHEN) is invisible',
  },
  {
    behaviour: 'a Tags character in a const',
    parameterSchema: s({
      type: 'object',
      properties: { mode: { const: `x${String.fromCodePoint(0xe0069)}` } },
    }),
    reason: 'parameterSchema.properties.mode.const[1]: U+E0069 (TAG LATIN SMALL LETTER I) is invisible',
  },
  {
    behaviour: 'an invisible times in a keyword of its own',
    parameterSchema: s({ type: 'object', 'x-note': { hint: ['fine', 'a\u2062b'] } }),
    reason: 'parameterSchema["x-note"].hint[1][1]: U+2062 (INVISIBLE TIMES) is invisible',
  },
  {
    behaviour: 'a word joiner in a description of array items',
    parameterSchema: s({
      type: 'object',
      properties: { tags: { type: 'array', items: { description: 'x\u2060' } } },
    }),
    reason: 'parameterSchema.properties.tags.items.description[1]: U+2060 (WORD JOINER) is invisible',
  },
  {
    behaviour: 'an Arabic letter mark in a $comment',
    parameterSchema: s({ type: 'object', $comment: '\u061C' }),
    reason: 'parameterSchema.$comment[0]: U+061C (ARABIC LETTER MARK) is a bidirectional control',
  },
  {
    behaviour: 'a run of variation selectors carrying bytes after an emoji',
    description: s(`ok 😀${String.fromCodePoint(0xe0100 + 72, 0xe0100 + 105)}`),
    reason:
      'description[7]: U+E0169 (VARIATION SELECTOR-122) is invisible (after another variation selector)',
  },
  {
    behaviour: 'a right-to-left mark in the title',
    title: s('Weather\u200F'),
    reason: 'title[7]: U+200F (RIGHT-TO-LEFT MARK) is a bidirectional control',
  },
  {
    behaviour: 'a Tags character in a description of the outputSchema',
    outputSchema: s({ type: 'object', description: `sum${String.fromCodePoint(0xe0041)}` }),
    reason: 'outputSchema.description[3]: U+E0041 (TAG LATIN CAPITAL LETTER A) is invisible',
  },
  {
    behaviour: 'a NUL in a pattern',
    parameterSchema: s({ type: 'object', properties: { id: { type: 'string', pattern: '^a\u0000$' } } }),
    reason: 'parameterSchema.properties.id.pattern[2]: U+0000 (NULL) is a control character',
  },
] as const;

/** Text that needs joiners and white space, offered as it is. */
const ALLOWED = [
  { behaviour: 'emoji ZWJ sequences', text: 'for the whole family 👨‍👩‍👧‍👦, coders 👩‍💻 and 🏳️‍🌈' },
  { behaviour: 'Hindi and Persian with zero-width non-joiners', text: 'क्‌ष and می‌خواهم' },
  { behaviour: 'tabs and newlines', text: 'line one\n\tline two' },
] as const;

const TIERS: IsolationTier[] = ['worker', 'strict', 'process'];

describe.each(TIERS)("isolation: '%s', hidden text in a declaration", (isolation) => {
  const tmp = freshDir(`toolhost-visible-${isolation}`);
  const dataDir = freshDir(`toolhost-visible-data-${isolation}`);
  const logger = recordingLogger();
  let host: ToolHost;
  let root: string;
  let statuses: ModuleStatus[];

  beforeAll(async () => {
    const modules: Record<string, string> = {};
    REFUSED.forEach((entry, index) => {
      modules[`refused-${index}.js`] = moduleWith(`refused_${index}`, entry);
    });
    ALLOWED.forEach((entry, index) => {
      modules[`allowed-${index}.js`] = moduleWith(`allowed_${index}`, {
        description: s(entry.text),
        parameterSchema: s({ type: 'object', properties: { note: { type: 'string', default: entry.text } } }),
      });
    });
    root = realpathSync(writePackage(tmp.path, 'hidden-text', modules));
    host = new Host({ isolation, logger, dataDir: dataDir.path });
    await loadEcho(host);
    statuses = (await host.load(root)).modules;
  });
  afterAll(async () => {
    await host?.close();
    tmp.remove();
    dataDir.remove();
  });

  it.each(REFUSED.map((entry, index) => ({ ...entry, index })))(
    '$behaviour: left out as DECLARATION_INVALID, naming field, position and code point',
    ({ index, reason }) => {
      const path = `${root}/tools/refused-${index}.js`;
      const status = statuses.find((candidate) => candidate.path === path);
      expect(status?.state).toBe('left-out');
      expect(status?.code).toBe('DECLARATION_INVALID');
      // Located where the field is defined, as every declaration reason is.
      expect(status?.reason).toMatch(/^tools\/refused-\d+\.js:\d+:\d+: /);
      expect(status?.reason?.replace(/^tools\/refused-\d+\.js:\d+:\d+: /, '')).toBe(reason);
      expect(host.list().map((tool) => tool.name)).not.toContain(`refused_${index}`);
      expect(logger.matching('warn', path)).toHaveLength(1);
    },
  );

  it.each(ALLOWED.map((entry, index) => ({ ...entry, index })))(
    '$behaviour are offered, the text unchanged',
    async ({ index, text }) => {
      const tool = host.list().find((info) => info.name === `allowed_${index}`);
      expect(tool?.description).toBe(text);
      expect(tool?.parameterSchema).toEqual({
        type: 'object',
        properties: { note: { type: 'string', default: text } },
      });
      expect((await host.call(`allowed_${index}`, {})).content).toEqual([{ type: 'text', text: 'ok' }]);
    },
  );

  it('the host, the next call and another package are fine after the catalogue', async () => {
    await expectHostFine(host);
    expect((await host.call('allowed_0', {})).isError).toBe(false);
  });
});
