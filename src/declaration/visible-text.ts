/**
 * What the model reads must be what a person reviewing the package sees. A declaration's strings
 * (and the keys of its objects) may not hold characters that render as nothing, reorder the text
 * around them, or drive a terminal: C0 and C1 controls other than tab and newline, bidirectional
 * controls, invisible formatting characters and the Tags block (which spells ASCII invisibly).
 * Zero-width joiners and non-joiners stay allowed: emoji sequences and many scripts need them.
 *
 * The walk is generic: it looks at every string anywhere in a field's value, whatever the keyword
 * that holds it, so a field added to declarations later is covered without a change here.
 */
import { classify, type HiddenKind } from './character-names.js';

/** The first refused character found in a field. */
export interface HiddenCharacter {
  /** The top-level declaration field (`description`, `parameterSchema`, …). */
  field: string;
  /** `description[212]: U+E0041 (TAG LATIN CAPITAL LETTER A) is invisible`. */
  reason: string;
}

const SENTENCE: Record<HiddenKind, string> = {
  control: 'is a control character',
  bidirectional: 'is a bidirectional control',
  invisible: 'is invisible',
};

/**
 * The first refused character in a string: its index (in UTF-16 code units, as JavaScript's
 * `indexOf` counts) and why. Most code units are ruled out by one comparison before a lookup.
 *
 * One variation selector after a character is how emoji and ideographs pick their presentation;
 * a second one straight after it selects nothing, and a run of them is a known way to carry bytes
 * no reader sees, so every one after the first is refused.
 */
export function firstHidden(
  text: string,
): { index: number; codePoint: number; sentence: string } | undefined {
  let selectorEnd = -1;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    // Every refused character is U+00AD or below, between U+0600 and U+206F, a variation selector
    // (U+FE00–U+FE0F), U+FEFF, or in the Tags block or the supplementary variation selectors (both
    // behind the high surrogate U+DB40).
    if (
      unit > 0xad &&
      (unit < 0x600 || unit > 0x206f) &&
      (unit < 0xfe00 || unit > 0xfe0f) &&
      unit !== 0xfeff &&
      unit !== 0xdb40
    )
      continue;
    const codePoint = text.codePointAt(index) as number;
    const found = classify(codePoint);
    if (found !== undefined)
      return { index, codePoint, sentence: `${codePointName(codePoint, found[1])} ${SENTENCE[found[0]]}` };
    const selector = variationSelector(codePoint);
    if (selector === undefined) continue;
    if (selectorEnd === index) {
      return {
        index,
        codePoint,
        sentence: `${codePointName(codePoint, selector)} is invisible (after another variation selector)`,
      };
    }
    selectorEnd = index + (codePoint > 0xffff ? 2 : 1);
  }
  return undefined;
}

/** `VARIATION SELECTOR-n` for U+FE00–U+FE0F and U+E0100–U+E01EF, else undefined. */
function variationSelector(codePoint: number): string | undefined {
  if (codePoint >= 0xfe00 && codePoint <= 0xfe0f) return `VARIATION SELECTOR-${codePoint - 0xfe00 + 1}`;
  if (codePoint >= 0xe0100 && codePoint <= 0xe01ef) return `VARIATION SELECTOR-${codePoint - 0xe0100 + 17}`;
  return undefined;
}

function codePointName(codePoint: number, name: string): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} (${name})`;
}

/**
 * The first refused character anywhere in one declaration field's value: in a string, in an
 * object's keys, or in anything nested, at any depth and under any keyword.
 */
export function findHiddenText(field: string, value: unknown): HiddenCharacter | undefined {
  const reason = walk(value, field);
  return reason === undefined ? undefined : { field, reason };
}

/** The first refused character in any field of a declaration, fields in their own order. */
export function findHiddenInDeclaration(declaration: object): HiddenCharacter | undefined {
  for (const [field, value] of Object.entries(declaration)) {
    const found = findHiddenText(field, value);
    if (found !== undefined) return found;
  }
  return undefined;
}

function walk(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    const found = firstHidden(value);
    return found === undefined ? undefined : `${path}[${found.index}]: ${found.sentence}`;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = walk(value[index], `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const inKey = firstHidden(key);
    if (inKey !== undefined) return `${path} key ${shownKey(key)}[${inKey.index}]: ${inKey.sentence}`;
    const found = walk((value as Record<string, unknown>)[key], `${path}${segment(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `.city`, or `["two words"]` for a key that is not a plain identifier. */
export function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A key that holds a refused character, quoted, with every such character written as an escape. */
function shownKey(key: string): string {
  return `"${showHidden(key)}"`;
}

/**
 * `text` with every character the lint refuses written as `\u{…}`: a refused value can still be
 * named in a reason, a log line or a terminal without doing what it was made to do.
 */
export function showHidden(text: string): string {
  if (firstHidden(text) === undefined) return text;
  let shown = '';
  for (const char of text) {
    const codePoint = char.codePointAt(0) as number;
    const hidden = classify(codePoint) !== undefined || variationSelector(codePoint) !== undefined;
    shown += hidden ? `\\u{${codePoint.toString(16).toUpperCase()}}` : char;
  }
  return shown;
}
