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

/** Why a character is refused, as the reason says it. */
export type HiddenKind = 'control' | 'bidirectional' | 'invisible';

/** The first refused character found in a field. */
export interface HiddenCharacter {
  /** The top-level declaration field (`description`, `parameterSchema`, …). */
  field: string;
  /** `description[212]: U+E0041 (TAG LATIN CAPITAL LETTER A) is invisible`. */
  reason: string;
}

const C0_NAMES = [
  'NULL',
  'START OF HEADING',
  'START OF TEXT',
  'END OF TEXT',
  'END OF TRANSMISSION',
  'ENQUIRY',
  'ACKNOWLEDGE',
  'BELL',
  'BACKSPACE',
  'CHARACTER TABULATION',
  'LINE FEED',
  'LINE TABULATION',
  'FORM FEED',
  'CARRIAGE RETURN',
  'SHIFT OUT',
  'SHIFT IN',
  'DATA LINK ESCAPE',
  'DEVICE CONTROL ONE',
  'DEVICE CONTROL TWO',
  'DEVICE CONTROL THREE',
  'DEVICE CONTROL FOUR',
  'NEGATIVE ACKNOWLEDGE',
  'SYNCHRONOUS IDLE',
  'END OF TRANSMISSION BLOCK',
  'CANCEL',
  'END OF MEDIUM',
  'SUBSTITUTE',
  'ESCAPE',
  'INFORMATION SEPARATOR FOUR',
  'INFORMATION SEPARATOR THREE',
  'INFORMATION SEPARATOR TWO',
  'INFORMATION SEPARATOR ONE',
];

const C1_NAMES = [
  'PADDING CHARACTER',
  'HIGH OCTET PRESET',
  'BREAK PERMITTED HERE',
  'NO BREAK HERE',
  'INDEX',
  'NEXT LINE',
  'START OF SELECTED AREA',
  'END OF SELECTED AREA',
  'CHARACTER TABULATION SET',
  'CHARACTER TABULATION WITH JUSTIFICATION',
  'LINE TABULATION SET',
  'PARTIAL LINE FORWARD',
  'PARTIAL LINE BACKWARD',
  'REVERSE LINE FEED',
  'SINGLE SHIFT TWO',
  'SINGLE SHIFT THREE',
  'DEVICE CONTROL STRING',
  'PRIVATE USE ONE',
  'PRIVATE USE TWO',
  'SET TRANSMIT STATE',
  'CANCEL CHARACTER',
  'MESSAGE WAITING',
  'START OF GUARDED AREA',
  'END OF GUARDED AREA',
  'START OF STRING',
  'SINGLE GRAPHIC CHARACTER INTRODUCER',
  'SINGLE CHARACTER INTRODUCER',
  'CONTROL SEQUENCE INTRODUCER',
  'STRING TERMINATOR',
  'OPERATING SYSTEM COMMAND',
  'PRIVACY MESSAGE',
  'APPLICATION PROGRAM COMMAND',
];

const NAMED = new Map<number, [HiddenKind, string]>([
  [0x7f, ['control', 'DELETE']],
  [0x061c, ['bidirectional', 'ARABIC LETTER MARK']],
  [0x200e, ['bidirectional', 'LEFT-TO-RIGHT MARK']],
  [0x200f, ['bidirectional', 'RIGHT-TO-LEFT MARK']],
  [0x202a, ['bidirectional', 'LEFT-TO-RIGHT EMBEDDING']],
  [0x202b, ['bidirectional', 'RIGHT-TO-LEFT EMBEDDING']],
  [0x202c, ['bidirectional', 'POP DIRECTIONAL FORMATTING']],
  [0x202d, ['bidirectional', 'LEFT-TO-RIGHT OVERRIDE']],
  [0x202e, ['bidirectional', 'RIGHT-TO-LEFT OVERRIDE']],
  [0x2066, ['bidirectional', 'LEFT-TO-RIGHT ISOLATE']],
  [0x2067, ['bidirectional', 'RIGHT-TO-LEFT ISOLATE']],
  [0x2068, ['bidirectional', 'FIRST STRONG ISOLATE']],
  [0x2069, ['bidirectional', 'POP DIRECTIONAL ISOLATE']],
  [0x00ad, ['invisible', 'SOFT HYPHEN']],
  [0x180e, ['invisible', 'MONGOLIAN VOWEL SEPARATOR']],
  [0x200b, ['invisible', 'ZERO WIDTH SPACE']],
  [0x2060, ['invisible', 'WORD JOINER']],
  [0x2061, ['invisible', 'FUNCTION APPLICATION']],
  [0x2062, ['invisible', 'INVISIBLE TIMES']],
  [0x2063, ['invisible', 'INVISIBLE SEPARATOR']],
  [0x2064, ['invisible', 'INVISIBLE PLUS']],
  [0xfeff, ['invisible', 'ZERO WIDTH NO-BREAK SPACE']],
]);

/** The names of the printable ASCII characters the Tags block mirrors (U+E0020–U+E007E). */
const ASCII_NAMES: string[] = (() => {
  const punctuation: Record<string, string> = {
    ' ': 'SPACE',
    '!': 'EXCLAMATION MARK',
    '"': 'QUOTATION MARK',
    '#': 'NUMBER SIGN',
    $: 'DOLLAR SIGN',
    '%': 'PERCENT SIGN',
    '&': 'AMPERSAND',
    "'": 'APOSTROPHE',
    '(': 'LEFT PARENTHESIS',
    ')': 'RIGHT PARENTHESIS',
    '*': 'ASTERISK',
    '+': 'PLUS SIGN',
    ',': 'COMMA',
    '-': 'HYPHEN-MINUS',
    '.': 'FULL STOP',
    '/': 'SOLIDUS',
    ':': 'COLON',
    ';': 'SEMICOLON',
    '<': 'LESS-THAN SIGN',
    '=': 'EQUALS SIGN',
    '>': 'GREATER-THAN SIGN',
    '?': 'QUESTION MARK',
    '@': 'COMMERCIAL AT',
    '[': 'LEFT SQUARE BRACKET',
    '\\': 'REVERSE SOLIDUS',
    ']': 'RIGHT SQUARE BRACKET',
    '^': 'CIRCUMFLEX ACCENT',
    _: 'LOW LINE',
    '`': 'GRAVE ACCENT',
    '{': 'LEFT CURLY BRACKET',
    '|': 'VERTICAL LINE',
    '}': 'RIGHT CURLY BRACKET',
    '~': 'TILDE',
  };
  const digits = ['ZERO', 'ONE', 'TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'EIGHT', 'NINE'];
  const names: string[] = [];
  for (let code = 0x20; code <= 0x7e; code++) {
    const char = String.fromCharCode(code);
    if (/[0-9]/.test(char)) names.push(`DIGIT ${digits[code - 0x30]}`);
    else if (/[A-Z]/.test(char)) names.push(`LATIN CAPITAL LETTER ${char}`);
    else if (/[a-z]/.test(char)) names.push(`LATIN SMALL LETTER ${char.toUpperCase()}`);
    else names.push(punctuation[char] ?? 'CHARACTER');
  }
  return names;
})();

/** Why `codePoint` is refused and its name, or undefined for a character a reader sees. */
export function classify(codePoint: number): [HiddenKind, string] | undefined {
  if (codePoint < 0x20) {
    if (codePoint === 0x09 || codePoint === 0x0a) return undefined;
    return ['control', C0_NAMES[codePoint] ?? 'CONTROL'];
  }
  if (codePoint >= 0x80 && codePoint <= 0x9f) return ['control', C1_NAMES[codePoint - 0x80] ?? 'CONTROL'];
  if (codePoint >= 0xe0000 && codePoint <= 0xe007f) return ['invisible', tagName(codePoint)];
  return NAMED.get(codePoint);
}

function tagName(codePoint: number): string {
  if (codePoint === 0xe0001) return 'LANGUAGE TAG';
  if (codePoint === 0xe007f) return 'CANCEL TAG';
  if (codePoint >= 0xe0020 && codePoint <= 0xe007e) return `TAG ${ASCII_NAMES[codePoint - 0xe0020]}`;
  return 'UNASSIGNED TAG CODE POINT';
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
