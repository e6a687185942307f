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
 * character class: C0 and C1 controls, DEL, and the invisible format
 * characters (zero-width spaces and joiners, bidirectional overrides and
 * isolates, word joiner, BOM).
 */
export const UNPRINTABLE_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff';

const UNPRINTABLE_RE = new RegExp(`[${UNPRINTABLE_CLASS}]`, 'gu');

/**
 * `text` with its unprintable characters (UNPRINTABLE_CLASS) removed, except
 * tab and newline, and trimmed; '' when nothing visible is left.
 */
export function visibleText(text: string): string {
  return text.replace(UNPRINTABLE_RE, (c) => (c === '\n' || c === '\t' ? c : '')).trim();
}

/** Length of `text` in characters as a person counts them (Unicode code points, so an emoji is one, not two UTF-16 units). */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
