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
