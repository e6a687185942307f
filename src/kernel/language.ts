/**
 * The one answer to "is this Chinese": the box speaks English and Mandarin,
 * and everything that picks between them (intent templates, replies, the
 * TTS voice, memory tokenising and extraction) asks here.
 *
 * A Chinese character is a code point of Unicode Script=Han (UAX #24,
 * Scripts.txt; ECMAScript's `\p{Script=Han}`, which needs the `u` flag): the
 * CJK Unified Ideographs and every extension (A to H, also outside the BMP),
 * the compatibility ideographs, the CJK and Kangxi radicals, 〇 and 々. CJK
 * punctuation and full-width forms are not Han (they are Script=Common).
 */

/** Languages a text can be detected as: Mandarin Chinese or English. */
export type TextLanguage = 'zh' | 'en';

/**
 * The Han class for building a larger regular expression, e.g.
 * `new RegExp(`^${HAN}+$`, 'u')` or inside brackets `[${HAN}A-Za-z]`.
 * The expression must use the `u` (or `v`) flag.
 */
export const HAN = '\\p{Script=Han}';

const HAN_ANY = new RegExp(HAN, 'u');
const HAN_ONLY = new RegExp(`^${HAN}+$`, 'u');

/** True when `text` contains at least one Chinese (Script=Han) character. */
export function hasHan(text: string): boolean {
  return HAN_ANY.test(text);
}

/** True when `text` is non-empty and every code point in it is a Chinese (Script=Han) character. */
export function isAllHan(text: string): boolean {
  return HAN_ONLY.test(text);
}

/**
 * The language of `text`: 'zh' as soon as it contains a Chinese character
 * (a Mandarin sentence may carry English names and digits; an English one
 * never carries Han), else 'en'. Empty text is 'en'.
 */
export function detectLanguage(text: string): TextLanguage {
  return hasHan(text) ? 'zh' : 'en';
}
