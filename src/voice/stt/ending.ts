/**
 * How a stretch of speech ends (pure, no IO): in a hiss (a fricative, the
 * /s/ of "yes"), in a stop's release (the /t/ of "yet": the mouth closes,
 * the sound stops, then a short burst), or neither (a vowel, "yeah").
 *
 * Why: to this acoustic model "yet" is "yes" (a tester's "yet" under "Do you
 * really want to unlock the Front Door?" was heard as "yes" 12 times of 12
 * and unlocked it; "get" and "jet" too). A yes ends in a hiss and never in a
 * stop, which the decoder's scores do not see but the audio shows: measured
 * on the tune voices of test/bench/voice-answers.ts (espeak-ng, room noise),
 * the /s/ of "yes" runs on from the vowel for 90 ms or more, while "yet",
 * "get" and "jet" fall silent for 20 to 50 ms after the vowel and end in a
 * 40 to 60 ms burst.
 *
 * Frames are 10 ms. The high band of a frame is the energy of its first
 * difference (a crude high-pass: a vowel's energy lies below 1 kHz, a
 * fricative's above 3 kHz). Both the frame's energy and its high band are
 * taken less the room's own (their 10th percentiles over the utterance), so
 * that a noise with little high band (pink or brown noise, a fan) or much of
 * it (white noise) does not hide or fake a hiss. A frame hisses when its
 * high band stands HISS_SOUND_DB above the room's and, less the room's, is at
 * least HISS_RATIO times its energy less the room's. Measured first on the
 * room noise alone (white, -50 dBFS), the rule saw no hiss at all in a
 * tester's "yet" in pink noise, in echo, or from a speaker 15 dB quieter, and
 * none in a "yes" either, so a "yet" there was a yes; measured against the
 * room's own noise the /s/ of "yes" stands out in all three (see
 * YES_MIN_HISS_MS for the figures).
 */

/** Analysis frame: 10 ms at 16 kHz (samples). */
const FRAME = 160;

/**
 * Least ratio of a hissing frame's high band to its energy, both less the
 * room's. White noise: 2; an /s/ in the clear: 2.2 to 2.9, in a room's echo
 * 1.0 to 2.1 (the vowel's echo under it); a vowel: under 0.6.
 */
export const HISS_RATIO = 0.9;

/** dB by which a hissing frame's high band stands above the room's (its 10th percentile over the utterance). */
export const HISS_SOUND_DB = 4;

/** Least drop, dB, from the burst to the silence before it that makes a stop's closure. */
const CLOSURE_DROP_DB = 6;

/** Longest final burst of a stop's release, ms (the /s/ of "yes" runs longer). */
const MAX_BURST_MS = 80;

/** dB over a hiss's median that makes a frame before it a vowel (gapMs). */
const LOUDER_DB = 3;

/** Longest closure looked for before a burst, ms. */
const MAX_CLOSURE_MS = 120;

/** Longest echo of the speech after its last hissing frame, ms: the hiss that ends the speech may lie this far before endMs. */
const MAX_TAIL_MS = 80;

/** How speech ends (see the module comment). */
export interface SpeechEnding {
  /** ms of hissing frames that end the speech (0: it ends in a vowel or a hum). */
  hissMs: number;
  /** The speech ends in a stop's release: a short burst (<= MAX_BURST_MS) after a closure of 20 ms or more, at least CLOSURE_DROP_DB below it. */
  release: boolean;
  /**
   * ms between the last sound LOUDER_DB over the final hiss (a vowel) and the hiss, up to MAX_CLOSURE_MS: 0 to 10
   * when the hiss follows a vowel (the /s/ of "yes"); a stop's closure and burst, or the pause before a breath,
   * otherwise. Absent when the speech ends in no hiss.
   */
  gapMs?: number;
}

/**
 * How the speech of 16 kHz mono s16le `pcm` ends, looking back from
 * `endMs` (the end of its last speech frame, speechExtent's speechMs +
 * leadingSilenceMs) over up to MAX_TAIL_MS of echo, or from the last
 * hissing frame up to 200 ms after it (a stop's burst, too soft to count as
 * speech there). The room's noise is the utterance's own (10th percentiles
 * of its frames' energy and high band).
 */
export function speechEnding(pcm: Buffer, endMs: number): SpeechEnding {
  const all = Math.floor(pcm.length / 2 / FRAME);
  if (all === 0) return { hissMs: 0, release: false };
  const frames = Array.from({ length: all }, (_, f) => frameEnergies(pcm, f));
  const tenth = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.1)]!;
  const roomE = tenth(frames.map((x) => x.e));
  const roomD = Math.max(tenth(frames.map((x) => x.d)), 1e-3);
  const soundD = roomD * 10 ** (HISS_SOUND_DB / 10);
  const hisses = (f: number): boolean => {
    const { e, d } = frames[f]!;
    return d >= soundD && d - roomD >= HISS_RATIO * Math.max(e - roomE, 1e-3);
  };
  const db = (f: number): number => 10 * Math.log10(frames[f]!.e / FRAME / 32768 ** 2 + 1e-10);
  const endFrame = Math.min(all, Math.round(endMs / 10));
  // The last hissing frame: up to MAX_TAIL_MS of echo before endMs, or a stop's burst after it (softer than speech,
  // its closure between), up to MAX_CLOSURE_MS + MAX_BURST_MS.
  let last = -1;
  for (let g = Math.max(0, endFrame - MAX_TAIL_MS / 10); g < Math.min(all, endFrame + (MAX_CLOSURE_MS + MAX_BURST_MS) / 10); g++) if (hisses(g)) last = g;
  if (last < 0) return { hissMs: 0, release: false };
  let f = last;
  const burstDb: number[] = [];
  while (f >= 0 && hisses(f)) {
    burstDb.push(db(f));
    f--;
  }
  const hiss = burstDb.length;
  // Before the hiss: quiet (a closure, a pause) for how long, then sound? A stop's release is a short hiss after 20 ms
  // or more of it.
  const burst = [...burstDb].sort((a, b) => a - b)[Math.floor(burstDb.length / 2)]!;
  let closure = 0;
  while (f >= 0 && closure * 10 < MAX_CLOSURE_MS && db(f) < burst - CLOSURE_DROP_DB) {
    closure++;
    f--;
  }
  const release = hiss >= 2 && hiss * 10 <= MAX_BURST_MS && closure >= 2 && f >= 0 && db(f) >= burst - CLOSURE_DROP_DB;
  // How long since the last sound LOUDER_DB over the hiss (a vowel) when the hiss starts: a breath fades in after a
  // quiet gap, and after a stop's burst, both softer than a vowel.
  let gap = 0;
  for (let g = last - hiss; g >= 0 && gap * 10 < MAX_CLOSURE_MS && db(g) < burst + LOUDER_DB; g--) gap++;
  return { hissMs: hiss * 10, release, gapMs: gap * 10 };
}

/** Frame `f`'s energy and the energy of its first difference within the frame (sums of squares, mean removed; a jump at the frame's edge is not its own). */
function frameEnergies(pcm: Buffer, f: number): { e: number; d: number } {
  let mean = 0;
  for (let i = f * FRAME; i < (f + 1) * FRAME; i++) mean += pcm.readInt16LE(i * 2);
  mean /= FRAME;
  let e = 0;
  let d = 0;
  let prev = pcm.readInt16LE(f * FRAME * 2) - mean;
  for (let i = f * FRAME; i < (f + 1) * FRAME; i++) {
    const s = pcm.readInt16LE(i * 2) - mean;
    e += s * s;
    d += (s - prev) * (s - prev);
    prev = s;
  }
  return { e, d };
}
