/**
 * Reading what pocketsphinx_continuous (pocketsphinx 0.8+5prealpha, Debian
 * 12) prints: the hypothesis on stdout, one line per utterance; with
 * `-backtrace yes` its log (stderr) holds, per utterance, a table
 *   word start end pprob ascr lscr lback
 * with frame numbers (10 ms frames at -frate 100) and acoustic scores
 * (log base 1.0001, scaled, normalised per frame against the best senone).
 * "Final result does not match the grammar" means no path reached the
 * grammar's final state: there is no valid hypothesis.
 */

/** One word (or filler) of a backtrace. */
export interface BacktraceWord {
  word: string;
  start: number;
  end: number;
  ascr: number;
  lscr: number;
}

/** What one decoder run printed. */
export interface DecodeOutput {
  /** Hypothesis lines joined with spaces; '' when none. */
  hypothesis: string;
  /** Backtrace of every utterance, in order. */
  words: BacktraceWord[];
  /** True when the decoder reported that no path reached the final state. */
  grammarMismatch: boolean;
}

const FILLER = /^(<sil>|<s>|<\/s>|\[[A-Z]+\]|\(NULL\)|SIL|\+[A-Z]+\+)$/;

/** True for silence/noise fillers and null entries of a backtrace. */
export function isFiller(word: string): boolean {
  return FILLER.test(word);
}

/** Parse stdout and stderr of one pocketsphinx_continuous run. */
export function parseDecodeOutput(stdout: string, stderr: string): DecodeOutput {
  const words: BacktraceWord[] = [];
  let inTable = false;
  for (const line of stderr.split('\n')) {
    if (/^word\s+start\s+end\s+pprob\s+ascr\s+lscr\s+lback/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    const m = /^(\S+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+(-?\d+)\s+(-?\d+)\s+\d+\s*$/.exec(line);
    if (m) words.push({ word: m[1]!, start: Number(m[2]), end: Number(m[3]), ascr: Number(m[4]), lscr: Number(m[5]) });
    else inTable = false;
  }
  const hypothesis = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .join(' ');
  return { hypothesis, words, grammarMismatch: /Final result does not match the grammar/.test(stderr) };
}

/** Sum of acoustic scores and number of frames covered by a backtrace. */
export function acousticTotals(words: BacktraceWord[]): { ascr: number; frames: number } {
  let ascr = 0;
  let frames = 0;
  for (const w of words) {
    ascr += w.ascr;
    frames += Math.max(0, w.end - w.start + 1);
  }
  return { ascr, frames };
}

/** Frames covered by real words (not fillers) of a backtrace. */
export function wordFrames(words: BacktraceWord[]): number {
  let n = 0;
  for (const w of words) if (!isFiller(w.word)) n += Math.max(0, w.end - w.start + 1);
  return n;
}

/** One utterance of a `-hypseg` file written by pocketsphinx_batch. */
export interface HypsegUtterance {
  /** Total path score (acoustic + weighted language score). */
  total: number;
  /** Acoustic score of the path. */
  ascr: number;
  /** Language (grammar) score of the path. */
  lscr: number;
  /** Frames in the utterance. */
  frames: number;
  /** Words and fillers with their start frame, alternate markers ("to(2)") stripped. */
  words: Array<{ word: string; start: number; ascr: number; lscr: number }>;
}

/**
 * Parse one line of a pocketsphinx_batch `-hypseg` file:
 * `uttid S scl T total A ascr L lscr {sf ascr lscr word}* nframes`.
 * Returns undefined for a line that does not have that shape.
 */
export function parseHypsegLine(line: string): HypsegUtterance | undefined {
  const t = line.trim().split(/\s+/);
  if (t.length < 9 || t[1] !== 'S' || t[3] !== 'T' || t[5] !== 'A' || t[7] !== 'L') return undefined;
  const total = Number(t[4]);
  const ascr = Number(t[6]);
  const lscr = Number(t[8]);
  const frames = Number(t[t.length - 1]);
  const segs = t.slice(9, -1);
  if (segs.length % 4 !== 0 || ![total, ascr, lscr, frames].every(Number.isFinite)) return undefined;
  const words: HypsegUtterance['words'] = [];
  for (let i = 0; i < segs.length; i += 4) {
    words.push({ start: Number(segs[i]), ascr: Number(segs[i + 1]), lscr: Number(segs[i + 2]), word: segs[i + 3]!.replace(/\(\d+\)$/, '') });
  }
  return { total, ascr, lscr, frames, words };
}

/** The words of a hypseg utterance without fillers, joined with spaces. */
export function hypsegText(u: HypsegUtterance): string {
  return u.words
    .map((w) => w.word)
    .filter((w) => !isFiller(w))
    .join(' ');
}
