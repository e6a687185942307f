/**
 * Text normalisation shared by the matcher, the template compiler and the
 * grammar: lower case, punctuation dropped, spoken numbers turned into
 * digits, and tokens. English is split on spaces; Chinese text is split into
 * single characters (no word segmentation is needed to match templates,
 * because templates are tokenised the same way), with runs of Latin letters
 * and digits kept whole.
 */
import { detectLanguage, HAN } from '../kernel/language.js';
import { parseChineseNumber, parseEnglishNumber, ZH_NUMERAL_CHARS } from './numbers.js';

/** Languages the templates exist in. */
export type IntentLanguage = 'en' | 'zh';

function cleanEnglish(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/(\d),(\d{3})/g, '$1$2')
    // A decimal comma ("2,5 kg") is a decimal point; a minus before a number is a word, so no template reads
    // "-5 percent" as 5 percent (a tester's set a light to 5 percent).
    .replace(/(\d),(\d{1,2})(?!\d)/g, '$1.$2')
    .replace(/(^|[\s(])[-\u2212](?=\d)/g, '$1minus ')
    .replace(/%/g, ' percent ')
    .replace(/°\s*[cf]?/g, ' degrees ')
    .replace(/(\d)\.(\d)/g, '$1\u0000$2')
    .replace(/[^\p{L}\p{N}'\u0000\s]/gu, ' ')
    .replace(/\u0000/g, '.')
    .replace(/(^|\s)'+|'+(?=\s|$)/g, ' ')
    .replace(/(\d)([a-z])/g, '$1 $2')
    .replace(/\bwhats\b/g, "what's")
    .replace(/\bhows\b/g, "how's")
    // Typed abbreviations of units after a number ("3 min", "90 secs", "2 hrs"); no template has them.
    .replace(/(\d) (?:mins?)\b/g, '$1 minutes')
    .replace(/(\d) (?:secs?)\b/g, '$1 seconds')
    .replace(/(\d) (?:hrs?)\b/g, '$1 hours');
}

/** English numbers in a token list become digit tokens ("twenty one" -> "21"). */
export function digitiseEnglish(tokens: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    const parsed = parseEnglishNumber(tokens, i);
    if (parsed) {
      out.push(String(parsed.value));
      i += parsed.used;
    } else {
      out.push(tokens[i]!);
      i += 1;
    }
  }
  return out;
}

function tokeniseEnglish(text: string): string[] {
  const words = cleanEnglish(text).split(/\s+/).filter((w) => w.length > 0);
  return digitiseEnglish(words);
}

/** Chinese numerals to digits; "百分之五十" -> "50%". */
function digitiseChinese(text: string): string {
  const numeral = new RegExp(`[${ZH_NUMERAL_CHARS}]+`, 'g');
  const percent = new RegExp(`百分之\\s*([${ZH_NUMERAL_CHARS}]+|\\d+(?:\\.\\d+)?)`, 'g');
  let s = text.replace(percent, (whole, n: string) => {
    const v = /^\d/.test(n) ? Number(n) : parseChineseNumber(n);
    return v === null ? whole : ` ${v} % `;
  });
  s = s.replace(numeral, (run) => {
    // A lone 点 (as in 几点) is not a number.
    const trimmed = run.replace(/^点+|点+$/g, '');
    if (trimmed.length === 0) return run;
    const value = parseChineseNumber(trimmed);
    if (value === null) return run;
    const lead = run.startsWith('点') ? '点' : '';
    const tail = run.endsWith('点') && !trimmed.endsWith('点') ? '点' : '';
    return ` ${lead}${value} ${tail}`;
  });
  return s;
}

function tokeniseChinese(text: string): string[] {
  const s = digitiseChinese(
    text
      .toLowerCase()
      .replace(/[，。！？、；：“”‘’（）《》·…,.!?;:"()]/g, ' ')
      .replace(/%/g, ' % '),
  );
  const tokens: string[] = [];
  const re = new RegExp(`(\\d+(?:\\.\\d+)?)|([a-z']+)|(%)|(${HAN})`, 'gu');
  for (const m of s.matchAll(re)) tokens.push(m[0]);
  // English number words inside Chinese text ("timer for five minutes" mixed in) stay as they are.
  return tokens;
}

/**
 * Normalise `text` to tokens for `language` (default: 'zh' when the text has
 * Chinese characters, else 'en'). English: lower case, punctuation removed,
 * apostrophes inside words kept ("what's"), "%" -> "percent", number words
 * -> digits. Chinese: one token per character, numerals -> digits, "百分之N"
 * -> "N %".
 */
export function tokenise(text: string, language?: IntentLanguage): string[] {
  const lang = language ?? detectLanguage(text);
  return lang === 'zh' ? tokeniseChinese(text) : tokeniseEnglish(text);
}

/** Normalised text: tokens joined (English with spaces, Chinese characters without). */
export function normaliseText(text: string, language?: IntentLanguage): string {
  const lang = language ?? detectLanguage(text);
  return joinTokens(tokenise(text, lang), lang);
}

/** Join tokens back into display text for `language`. */
export function joinTokens(tokens: string[], language: IntentLanguage): string {
  if (language === 'en') return tokens.join(' ');
  let out = '';
  for (const t of tokens) {
    const prev = out.at(-1);
    const needsSpace = prev !== undefined && /[a-z0-9%]/.test(prev) && /^[a-z0-9]/.test(t);
    out += needsSpace ? ` ${t}` : t;
  }
  return out;
}
