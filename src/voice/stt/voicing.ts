/**
 * Is there voiced speech in the audio? (pure, no IO). A grammar decoder
 * forces any sound into its nearest phrase: a tester's 0.25 s burst of brown
 * noise (a cough, a bag put down) while "Do you really want to unlock the
 * Front Door?" waited was heard as "yeah" and unlocked the door, six times
 * out of six. Every answer and every command of the grammar holds a vowel,
 * and a vowel is voiced: the vocal folds make it periodic at the speaker's
 * pitch (about 70 to 400 Hz). Noise, a cough, a clap, a rustle are not.
 *
 * A frame is voiced when the normalised autocorrelation of its
 * pre-emphasised samples (which turns brown and pink noise, whose
 * neighbouring samples are alike, into near-white noise) peaks at a pitch
 * lag at VOICED_CORRELATION or more: the autocorrelation pitch detector of
 * L. R. Rabiner, "On the use of autocorrelation analysis for pitch
 * detection", IEEE Trans. ASSP 25(1), 1977, without its centre clipping.
 */

/** Analysis hop: 10 ms at 16 kHz (samples), as speechExtent's frames. */
const HOP = 160;
/** Analysis window, samples (32 ms: more than two periods of an 80 Hz voice). */
const WINDOW = 512;
/** Shortest pitch period looked for, samples (400 Hz at 16 kHz). */
const MIN_LAG = 40;
/** Longest pitch period looked for, samples (70 Hz at 16 kHz). */
const MAX_LAG = 228;
/** Pre-emphasis coefficient (the usual speech front end's 0.97). */
const PRE_EMPHASIS = 0.97;

/**
 * Least normalised autocorrelation peak of a voiced frame (0..1). Chosen on
 * noise bursts (brown, pink and white noise, 0.1 to 0.6 s, three levels,
 * with room noise; none of their frames reach it) and the tune voices'
 * spoken answers (test/bench/voice-answers.ts TUNE_VOICES), whose vowels
 * lie well above it.
 */
export const VOICED_CORRELATION = 0.5;

/**
 * Voiced ms of 16 kHz mono s16le `pcm` between `fromMs` and `toMs` (the
 * speech extent, pocketsphinx-duration.ts speechExtent), counted in 10 ms
 * frames and up to `capMs` (counting stops there: enough to tell speech from
 * noise, and the cost stays low on long speech). Each frame costs about
 * 100 000 multiply-adds.
 */
export function voicedMs(pcm: Buffer, fromMs: number, toMs: number, capMs = Infinity): number {
  const n = Math.floor(pcm.length / 2);
  const first = Math.max(0, Math.floor(fromMs / 10));
  const last = Math.min(Math.floor(toMs / 10), Math.floor((n - WINDOW - MAX_LAG) / HOP));
  if (last < first) return 0;
  const start = first * HOP;
  const end = Math.min(n, last * HOP + WINDOW + MAX_LAG);
  const x = new Float64Array(end - start);
  let prev = start > 0 ? pcm.readInt16LE((start - 1) * 2) : 0;
  for (let i = start; i < end; i++) {
    const s = pcm.readInt16LE(i * 2);
    x[i - start] = s - PRE_EMPHASIS * prev;
    prev = s;
  }
  let voiced = 0;
  for (let f = first; f <= last && voiced < capMs; f++) {
    if (frameCorrelation(x, (f - first) * HOP) >= VOICED_CORRELATION) voiced += 10;
  }
  return voiced;
}

/** Highest normalised autocorrelation of the window at `a` over the pitch lags. */
function frameCorrelation(x: Float64Array, a: number): number {
  let e0 = 0;
  for (let i = a; i < a + WINDOW; i++) e0 += x[i]! * x[i]!;
  if (e0 === 0) return 0;
  let best = 0;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let c = 0;
    let e1 = 0;
    for (let i = a; i < a + WINDOW; i++) {
      const y = x[i + lag]!;
      c += x[i]! * y;
      e1 += y * y;
    }
    if (e1 > 0) {
      const r = c / Math.sqrt(e0 * e1);
      if (r > best) best = r;
    }
  }
  return best;
}
