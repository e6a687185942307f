/**
 * Typed or sent text as the box takes it: what it has that can be seen.
 *
 * An input of only invisible characters (NUL, other controls, zero-width
 * spaces, bidirectional overrides) is no message: a tester's `ask` of NUL
 * and zero-width spaces went to the LLM as a question. The same characters
 * make a device name read as another (src/home/discovery-schema.ts), so
 * one class serves both.
 */

/**
 * Characters that are never visible text, as the inside of a RegExp
 * character class (used with the `u` flag): controls (Cc), every format
 * character (Cf: soft hyphen, zero-width spaces and joiners, bidirectional
 * marks, overrides and isolates, BOM, interlinear annotation, invisible tag
 * characters) and lone surrogates (Cs).
 */
export const UNPRINTABLE_CLASS = '\\p{Cc}\\p{Cf}\\p{Cs}';

/**
 * Characters removed from typed text: controls (Cc), every format character
 * (Cf: soft hyphen, bidirectional marks and overrides, zero-width
 * characters, interlinear annotation, invisible tag characters that can
 * smuggle ASCII to the LLM), lone surrogates (Cs) and noncharacters.
 */
const INVISIBLE_RE = new RegExp(`[${UNPRINTABLE_CLASS}\\p{Noncharacter_Code_Point}]`, 'gu');

/**
 * Characters that draw nothing though Unicode calls them letters or symbols
 * (Hangul fillers, the braille blank, variation selectors, the combining
 * grapheme joiner): kept in text that has something else, but no text on
 * their own. Found by a tester: each of these alone was said and asked.
 */
const BLANK_RE = /[\u115f\u1160\u3164\uffa0\u2800\u034f\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u180b-\u180f\u{1d173}-\u{1d17a}]/gu;

/** Something that can be seen: a letter, digit, punctuation mark or symbol (a combining mark alone sits on nothing). */
const SEEN_RE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/**
 * `text` with its invisible characters (INVISIBLE_RE) removed, except tab and
 * newline, and trimmed; '' when nothing visible is left (only marks,
 * white space or BLANK_RE characters).
 */
export function visibleText(text: string): string {
  const kept = text.replace(INVISIBLE_RE, (c) => (c === '\n' || c === '\t' ? c : '')).trim();
  return SEEN_RE.test(kept.replace(BLANK_RE, '')) ? kept : '';
}

/** Length of `text` in characters as a person counts them (Unicode code points, so an emoji is one, not two UTF-16 units). */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
