/**
 * Which characters a declaration may not hold, and their Unicode names, as a refusal reason says
 * them (`U+202E (RIGHT-TO-LEFT OVERRIDE) is a bidirectional control`): C0 and C1 controls other
 * than tab and newline, bidirectional controls, invisible formatting characters and the Tags block.
 */

/** Why a character is refused, as the reason says it. */
export type HiddenKind = 'control' | 'bidirectional' | 'invisible';

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
