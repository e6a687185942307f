/**
 * Spoken numbers, both ways: English number words and Chinese numerals to
 * digits ("fifty" -> 50, "three hundred and ten" -> 310, "twenty two point
 * five" -> 22.5, "三十" -> 30, "两" -> 2), and digits back to English words
 * for the speech grammar (50 -> "fifty"). Rules follow ordinary English and
 * Chinese counting; no ordinals, no fractions beyond "point".
 */

const UNITS: Record<string, number> = {
  zero: 0, oh: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16,
  seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Record<string, number> = {
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
};
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1_000_000 };

const UNIT_WORDS = Object.keys(UNITS).filter((w) => w !== 'oh');
const TEN_WORDS = Object.keys(TENS);

/** True when `w` is an English number word (not "a", "and", "point"). */
export function isNumberWord(w: string): boolean {
  return w in UNITS || w in TENS || w in SCALES;
}

/**
 * Parse a run of English number words starting at `tokens[start]`.
 * Accepts digits as well ("3"). Returns the value and how many tokens were
 * used, or null when no number starts there. "a hundred" counts as 100;
 * "and" is consumed only inside a number ("one hundred and five").
 */
export function parseEnglishNumber(tokens: string[], start: number): { value: number; used: number } | null {
  let i = start;
  const first = tokens[i];
  if (first === undefined) return null;
  if (/^\d+(\.\d+)?$/.test(first)) return { value: Number(first), used: 1 };
  let total = 0;
  let current = 0;
  let any = false;
  let lastKind: 'unit' | 'ten' | 'scale' | 'none' = 'none';
  if ((first === 'a' || first === 'an') && tokens[i + 1] !== undefined && tokens[i + 1]! in SCALES) {
    current = 1;
    any = true;
    lastKind = 'unit';
    i += 1;
  }
  for (; i < tokens.length; i++) {
    const w = tokens[i]!;
    if (w in UNITS && w !== 'oh') {
      if (lastKind === 'unit' || (lastKind === 'ten' && UNITS[w]! >= 10)) break;
      current += UNITS[w]!;
      lastKind = 'unit';
      any = true;
    } else if (w in TENS) {
      if (lastKind === 'unit' || lastKind === 'ten') break;
      current += TENS[w]!;
      lastKind = 'ten';
      any = true;
    } else if (w in SCALES && any) {
      const scale = SCALES[w]!;
      if (scale === 100) current = (current || 1) * 100;
      else {
        total += (current || 1) * scale;
        current = 0;
      }
      lastKind = 'scale';
    } else if (w === 'and' && lastKind === 'scale' && tokens[i + 1] !== undefined && isNumberWord(tokens[i + 1]!)) {
      continue;
    } else break;
  }
  if (!any) return null;
  let value = total + current;
  let used = i - start;
  // Decimal part: "point five", "point two five".
  if (tokens[i] === 'point' && tokens[i + 1] !== undefined && tokens[i + 1]! in UNITS && UNITS[tokens[i + 1]!]! < 10) {
    let frac = '';
    let j = i + 1;
    while (j < tokens.length && tokens[j]! in UNITS && UNITS[tokens[j]!]! < 10) {
      frac += String(UNITS[tokens[j]!]);
      j++;
    }
    value = Number(`${value}.${frac}`);
    used = j - start;
  }
  return { value, used };
}

const ZH_DIGITS: Record<string, number> = {
  零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9,
};
const ZH_SCALES: Record<string, number> = { 十: 10, 百: 100, 千: 1000, 万: 10_000 };

/** Characters that can appear in a Chinese numeral. */
export const ZH_NUMERAL_CHARS = '零〇一二两三四五六七八九十百千万点';

/**
 * Value of a Chinese numeral string ("三十" 30, "十五" 15, "一百零五" 105,
 * "二十一点五" 21.5, "两" 2); null when it is not one.
 */
export function parseChineseNumber(s: string): number | null {
  if (s.length === 0) return null;
  const [intPart, fracPart] = s.split('点');
  if (intPart === undefined || intPart.length === 0) return null;
  let total = 0;
  let section = 0;
  let digit = -1;
  for (const ch of intPart) {
    if (ch in ZH_DIGITS) {
      digit = ZH_DIGITS[ch]!;
    } else if (ch in ZH_SCALES) {
      const scale = ZH_SCALES[ch]!;
      if (scale === 10_000) {
        section += digit >= 0 ? digit : 0;
        total += section * scale;
        section = 0;
      } else {
        section += (digit >= 0 ? digit : 1) * scale;
      }
      digit = -1;
    } else return null;
  }
  if (digit >= 0) section += digit;
  let value = total + section;
  if (fracPart !== undefined) {
    if (fracPart.length === 0) return null;
    let frac = '';
    for (const ch of fracPart) {
      if (!(ch in ZH_DIGITS)) return null;
      frac += String(ZH_DIGITS[ch]);
    }
    value = Number(`${value}.${frac}`);
  }
  return value;
}

/**
 * Whole text of number words to its value: "fifty" -> 50, "three hundred
 * and ten" -> 310, "22.5" -> 22.5, "五十" -> 50; null when the text is not
 * exactly one number. Case and surrounding spaces are ignored.
 */
export function wordsToNumber(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (t.length === 0) return null;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if ([...t].every((c) => ZH_NUMERAL_CHARS.includes(c))) return parseChineseNumber(t);
  const tokens = t.replace(/-/g, ' ').split(/\s+/);
  const parsed = parseEnglishNumber(tokens, 0);
  if (!parsed || parsed.used !== tokens.length) return null;
  return parsed.value;
}

/**
 * English words for a non-negative integer below one million, the way people
 * say it to a voice box: 50 -> "fifty", 21 -> "twenty one", 105 -> "one
 * hundred five", 1500 -> "one thousand five hundred". Decimals: 21.5 ->
 * "twenty one point five". Throws RangeError outside 0..999999.
 */
export function numberToWords(n: number): string {
  if (!Number.isFinite(n) || n < 0 || n >= 1_000_000) throw new RangeError(`numberToWords: ${n} out of range`);
  if (!Number.isInteger(n)) {
    const [i, f] = String(n).split('.');
    return `${numberToWords(Number(i))} point ${[...(f ?? '')].map((d) => UNIT_WORDS[Number(d)]).join(' ')}`;
  }
  if (n < 20) return UNIT_WORDS[n]!;
  if (n < 100) {
    const t = TEN_WORDS[Math.floor(n / 10) - 2]!;
    return n % 10 === 0 ? t : `${t} ${UNIT_WORDS[n % 10]!}`;
  }
  if (n < 1000) {
    const h = `${UNIT_WORDS[Math.floor(n / 100)]!} hundred`;
    return n % 100 === 0 ? h : `${h} ${numberToWords(n % 100)}`;
  }
  const th = `${numberToWords(Math.floor(n / 1000))} thousand`;
  return n % 1000 === 0 ? th : `${th} ${numberToWords(n % 1000)}`;
}
