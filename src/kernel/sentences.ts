/**
 * Sentence streaming: cut a reply into sentences while the model still
 * writes, so the first sentence can be synthesised and playing before the
 * rest exists. English and Chinese punctuation. Rules:
 * - '.', '!', '?', ';' and '…' end a sentence only when followed by
 *   whitespace (so 21.5, 3.14, e.g. "v1.2" never split) and, for '.', when
 *   the word before is not an abbreviation (Dr., Mr., e.g., etc. + next word
 *   in lower case) or a single capital initial (J. R. R.);
 * - '。', '！', '？', '；' end a sentence at once (Chinese has no spaces);
 * - closing quotes and brackets after the mark stay with the sentence;
 * - a blank line or a newline ends a sentence (list items);
 * - a sentence longer than `maxChars` is cut at the last comma or space;
 * - with `firstClause`, until the first piece is out a comma, colon or dash
 *   followed by whitespace (',', '，', '、', '：' at once) also ends it, so
 *   a voice starts on "Sure," while the model still writes the rest of its
 *   first sentence.
 */
import { hasHan } from './language.js';

const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'e.g', 'i.e', 'approx', 'no', 'fig',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'inc', 'ltd', 'co', 'a.m', 'p.m', 'u.s',
]);
/** Abbreviations that may also end a sentence when the next word starts with a capital. */
const MAY_END = new Set(['etc', 'inc', 'ltd', 'co', 'a.m', 'p.m', 'u.s', 'no']);
const CJK_END = new Set(['。', '！', '？', '；', '!', '?']);
const WESTERN_END = new Set(['.', '!', '?', ';', '…']);
const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '）', '」', '』', '》', '】']);

/** Options of SentenceSplitter. */
export interface SentenceSplitterOptions {
  /** Longest sentence before a forced cut at a comma or space, characters (default 220). */
  maxChars?: number;
  /** Cut the first piece at its first clause boundary (see the module comment); default false. */
  firstClause?: boolean;
}

/** Incremental sentence splitter: push() text as it streams, flush() at the end. */
export class SentenceSplitter {
  private buf = '';
  private readonly maxChars: number;
  /** Still before the first piece (only with firstClause). */
  private first: boolean;
  constructor(opts: SentenceSplitterOptions = {}) {
    this.maxChars = opts.maxChars ?? 220;
    this.first = opts.firstClause === true;
  }

  /** Add streamed text; returns the sentences completed by it (trimmed, never empty). */
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    for (;;) {
      const cut = this.findCut();
      if (cut < 0) break;
      const s = this.buf.slice(0, cut).trim();
      this.buf = this.buf.slice(cut);
      if (s) {
        out.push(s);
        this.first = false;
      }
    }
    while (this.buf.trim().length > this.maxChars) {
      const s = this.forceCut();
      if (s) out.push(s);
    }
    return out;
  }

  /** The rest of the text as a last sentence, or undefined when only whitespace remains. Resets the splitter. */
  flush(): string | undefined {
    const s = this.buf.trim();
    this.buf = '';
    return s || undefined;
  }

  /** Index just past the end of the first complete sentence in the buffer, or -1. */
  private findCut(): number {
    const sentence = this.sentenceCut();
    if (!this.first) return sentence;
    const clause = this.clauseCut();
    return clause >= 0 && (sentence < 0 || clause < sentence) ? clause : sentence;
  }

  /** Index just past the first clause boundary with words before it, or -1. */
  private clauseCut(): number {
    const b = this.buf;
    for (let i = 1; i < b.length; i++) {
      const c = b[i]!;
      if (c === '，' || c === '、' || c === '：') return b.slice(0, i).trim() ? i + 1 : -1;
      if (c !== ',' && c !== ':' && c !== '—') continue;
      if (i + 1 >= b.length) return -1; // wait: "1,000" or "3:30" are no boundaries
      if (/\s/.test(b[i + 1]!) && /\p{L}/u.test(b.slice(0, i))) return i + 1;
    }
    return -1;
  }

  private sentenceCut(): number {
    const b = this.buf;
    for (let i = 0; i < b.length; i++) {
      const c = b[i]!;
      if (c === '\n') {
        if (b.slice(0, i).trim()) return i + 1;
        continue;
      }
      const cjk = CJK_END.has(c) && isCjk(charBefore(b, i));
      if (c === '。' || c === '！' || c === '？' || c === '；' || cjk) {
        let j = i + 1;
        while (j < b.length && (CLOSERS.has(b[j]!) || CJK_END.has(b[j]!))) j++;
        if (j === b.length && !(c === '。' || c === '！' || c === '？' || c === '；')) return -1;
        return j;
      }
      if (!WESTERN_END.has(c)) continue;
      let j = i + 1;
      while (j < b.length && (CLOSERS.has(b[j]!) || WESTERN_END.has(b[j]!))) j++;
      if (j >= b.length) return -1; // wait for the next character
      if (!/\s/.test(b[j]!)) {
        i = j - 1;
        continue;
      }
      if (c === '.') {
        const abbr = this.isAbbreviation(b, i, j);
        if (abbr === 'wait') return -1;
        if (abbr) {
          i = j - 1;
          continue;
        }
      }
      return j;
    }
    return -1;
  }

  /** true/false, or 'wait' when the word could be an abbreviation and the next word has not arrived. */
  private isAbbreviation(b: string, dot: number, after: number): boolean | 'wait' {
    const m = /([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)$/.exec(b.slice(0, dot));
    if (!m) return false;
    const word = m[1]!;
    const prevChar = b[dot - word.length - 1];
    if (prevChar !== undefined && !/[\s("'“]/.test(prevChar)) return false;
    const lower = word.toLowerCase();
    const candidate = ABBREVIATIONS.has(lower) || (word.length === 1 && /[A-Z]/.test(word));
    if (!candidate) return false;
    const next = /\S/.exec(b.slice(after));
    if (!next) return 'wait'; // decided by the next word; flush() ends it if none comes
    if (word.length === 1 && /[A-Z]/.test(word)) return /[A-Z]/.test(next[0]); // initials: "J. R. Tolkien"
    if (!ABBREVIATIONS.has(lower)) return false;
    if (MAY_END.has(lower)) return !/[A-Z]/.test(next[0]);
    return true;
  }

  private forceCut(): string {
    const b = this.buf;
    const window = b.slice(0, this.maxChars);
    let at = Math.max(window.lastIndexOf(','), window.lastIndexOf('，'), window.lastIndexOf('、'));
    if (at < this.maxChars / 3) at = window.lastIndexOf(' ');
    if (at < 1) at = this.maxChars - 1;
    const s = b.slice(0, at + 1).trim();
    this.buf = b.slice(at + 1);
    return s;
  }
}

/** A Chinese character (language.ts), CJK punctuation (U+3000-303F) or a full-width form (U+FF00-FFEF). */
function isCjk(c: string | undefined): boolean {
  return c !== undefined && (hasHan(c) || /[\u3000-\u303f\uff00-\uffef]/.test(c));
}

/** The character (whole code point) that ends just before UTF-16 index `i` of `s`; undefined at the start. */
function charBefore(s: string, i: number): string | undefined {
  return [...s.slice(Math.max(0, i - 2), i)].pop();
}

/** Split a whole text into sentences (same rules as the streaming splitter). */
export function splitSentences(text: string, opts?: SentenceSplitterOptions): string[] {
  const s = new SentenceSplitter(opts);
  const out = s.push(text);
  const last = s.flush();
  if (last) out.push(last);
  return out;
}

/**
 * Make a sentence speakable: drop markdown (emphasis, headings, list bullets,
 * code fences, link targets) and emoji; returns '' when nothing speakable
 * (no letter, digit or CJK character) remains.
 */
export function speakable(text: string): string {
  const t = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/^\s*(#{1,6}|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/(\*\*|__|\*|_|~~)(?=\S)([^*_~]*\S)\1/g, '$2')
    .replace(/[\p{Extended_Pictographic}\u{FE0F}\u{200D}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  return /[\p{L}\p{N}]/u.test(t) ? t : '';
}
