/**
 * Cuts streamed model text into sentences as tokens arrive, so a stream
 * channel (the speaker) can start on the first sentence while the model still
 * writes. English and Chinese punctuation; decimals (21.5), common
 * abbreviations (Mr., Dr., e.g.) and list numbers are not cut.
 */

const ABBREV = new Set(['mr', 'mrs', 'ms', 'dr', 'st', 'vs', 'etc', 'e.g', 'i.e', 'no', 'jr', 'sr', 'prof', 'approx']);
const CJK_END = '。！？；…';
const LATIN_END = '.!?;';

/** Incremental sentence splitter. push() returns the sentences completed by this piece of text. */
export class SentenceStream {
  private buf = '';
  /** Minimum characters of a sentence before it is cut at a Latin mark (avoids "1." fragments). */
  constructor(private readonly minChars = 2) {}

  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const ch = this.buf[i]!;
      if (ch === '\n' && this.buf[i + 1] === '\n') {
        this.emit(out, this.buf.slice(start, i));
        start = i + 2;
        i++;
        continue;
      }
      if (CJK_END.includes(ch)) {
        let j = i + 1;
        while (j < this.buf.length && (CJK_END.includes(this.buf[j]!) || '”"）)'.includes(this.buf[j]!))) j++;
        this.emit(out, this.buf.slice(start, j));
        start = j;
        i = j - 1;
        continue;
      }
      if (LATIN_END.includes(ch)) {
        // Need the next character to decide (end of buffer: wait for more text).
        let j = i + 1;
        while (j < this.buf.length && (LATIN_END.includes(this.buf[j]!) || '"\')]'.includes(this.buf[j]!))) j++;
        if (j >= this.buf.length) break;
        const next = this.buf[j]!;
        if (!/\s/.test(next)) continue; // 21.5, e.g.x, file.txt
        if (ch === '.') {
          const word = /([A-Za-z.]+)$/.exec(this.buf.slice(start, i))?.[1]?.toLowerCase();
          if (word && ABBREV.has(word)) continue;
          if (/(^|\s)\d{1,2}$/.test(this.buf.slice(start, i)) && i - start < 4) continue; // "1. " list marker
        }
        const sentence = this.buf.slice(start, j);
        if (sentence.trim().length < this.minChars) continue;
        this.emit(out, sentence);
        start = j;
        i = j - 1;
      }
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** The rest of the text (end of stream). */
  flush(): string[] {
    const out: string[] = [];
    this.emit(out, this.buf);
    this.buf = '';
    return out;
  }

  /** Text received but not yet emitted. */
  get pending(): string {
    return this.buf;
  }

  private emit(out: string[], s: string): void {
    const t = s.trim();
    if (t) out.push(t);
  }
}

/** Split a whole text into sentences. */
export function splitSentences(text: string): string[] {
  const s = new SentenceStream();
  return [...s.push(text), ...s.flush()];
}
