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
 * Frames are 10 ms. A frame hisses when the energy of its first difference
 * is at least HISS_RATIO times its energy (a crude high-pass: a vowel's
 * energy lies below 1 kHz, a fricative's above 3 kHz); it sounds when it is
 * SOUND_DB above the utterance's floor (its 10th percentile of frame
 * energies, as speechExtent's).
 */

/** Analysis frame: 10 ms at 16 kHz (samples). */
const FRAME = 160;

/** Least ratio of first-difference energy to energy of a hissing frame (white noise: 2; a vowel: under 0.3). */
export const HISS_RATIO = 1.5;

/** dB above the floor of a frame that sounds at the end of speech (lower than speechExtent's 12: a soft /s/ counts). */
const SOUND_DB = 8;

/** Least drop, dB, from the burst to the silence before it that makes a stop's closure. */
const CLOSURE_DROP_DB = 6;

/** Longest final burst of a stop's release, ms (the /s/ of "yes" runs longer). */
const MAX_BURST_MS = 80;

/** Longest closure looked for before a burst, ms. */
const MAX_CLOSURE_MS = 120;

/** How speech ends (see the module comment). */
export interface SpeechEnding {
  /** ms of hissing, sounding frames that end the speech (0: it ends in a vowel or a hum). */
  hissMs: number;
  /** The speech ends in a stop's release: a short burst (<= MAX_BURST_MS) after a closure of 20 ms or more, at least CLOSURE_DROP_DB below it. */
  release: boolean;
}

/**
 * How the speech of 16 kHz mono s16le `pcm` ends, looking back from
 * `endMs` (the end of its last speech frame, speechExtent's speechMs +
 * leadingSilenceMs) or from the last hissing sound up to 200 ms after it (a
 * stop's burst, too soft to count as speech there). `floorDb`: the
 * utterance's floor, dBFS (frame RMS).
 */
export function speechEnding(pcm: Buffer, endMs: number, floorDb: number): SpeechEnding {
  const all = Math.floor(pcm.length / 2 / FRAME);
  const at = (f: number): { db: number; hiss: boolean } => frameSound(pcm, f);
  // A stop's burst is softer than speech: it may lie past the speech's end (its closure between), up to MAX_CLOSURE_MS + MAX_BURST_MS.
  let frames = Math.min(all, Math.round(endMs / 10));
  for (let g = frames; g < Math.min(all, frames + (MAX_CLOSURE_MS + MAX_BURST_MS) / 10); g++) {
    const s = at(g);
    if (s.db > floorDb + SOUND_DB && s.hiss) frames = g + 1;
  }
  let f = frames - 1;
  // The hissing frames at the very end.
  let hiss = 0;
  const burstDb: number[] = [];
  while (f >= 0) {
    const s = at(f);
    if (!(s.db > floorDb + SOUND_DB && s.hiss)) break;
    burstDb.push(s.db);
    hiss++;
    f--;
  }
  // A stop's release: the hiss is short, and before it the sound drops (the closure) for 20 ms or more, after sound.
  let release = false;
  if (hiss >= 2 && hiss * 10 <= MAX_BURST_MS) {
    const burst = [...burstDb].sort((a, b) => a - b)[Math.floor(burstDb.length / 2)]!;
    let closure = 0;
    while (f >= 0 && closure * 10 < MAX_CLOSURE_MS && at(f).db < burst - CLOSURE_DROP_DB) {
      closure++;
      f--;
    }
    release = closure >= 2 && f >= 0 && at(f).db >= burst - CLOSURE_DROP_DB;
  }
  return { hissMs: hiss * 10, release };
}

/** Frame `f`'s energy (dBFS of its RMS, mean removed) and whether it hisses. */
function frameSound(pcm: Buffer, f: number): { db: number; hiss: boolean } {
  let mean = 0;
  for (let i = f * FRAME; i < (f + 1) * FRAME; i++) mean += pcm.readInt16LE(i * 2);
  mean /= FRAME;
  let e = 0;
  let d = 0;
  let prev = f > 0 ? pcm.readInt16LE((f * FRAME - 1) * 2) - mean : 0;
  for (let i = f * FRAME; i < (f + 1) * FRAME; i++) {
    const s = pcm.readInt16LE(i * 2) - mean;
    e += s * s;
    d += (s - prev) * (s - prev);
    prev = s;
  }
  const rms = Math.sqrt(e / FRAME) / 32768;
  return { db: rms > 1e-5 ? 20 * Math.log10(rms) : -100, hiss: e > 0 && d >= HISS_RATIO * e };
}
