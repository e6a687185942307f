/**
 * Audio clean-up before the final decode of an utterance (16 kHz mono s16le):
 * DC removal, a quiet voice raised to SPEECH_LEVEL_DB, a 1-LSB dither, a
 * noise floor no quieter than FLOOR_FILL_DB, padding at the ends (digital or
 * near silence) filled with the recording's own room noise, and dropping a
 * short leading transient. A push-to-talk press or
 * a wake-word hand-over often leaves a click or burst in the first few
 * hundred ms, followed by a quiet gap before the person speaks; the decoder
 * otherwise spends grammar words on that burst ("timer a hour ..." for the
 * click before "set a timer ..."). Everything is decided from frame energies
 * of the utterance itself, nothing is tuned per recording.
 */

/**
 * The quietest noise floor the decoder is given, dBFS RMS: an utterance whose
 * floor (the 10th percentile of its 10 ms frame energies) is quieter gets
 * white noise (fixed seed) that raises it to this level. Near-digital silence
 * between words (a synthesised or edited file, a USB microphone whose own
 * noise suppression gates the pauses to zero) is far from the room noise the
 * Debian acoustic model was trained on. Measured on espeak-ng's "lock" and
 * "unlock the front door" with no room noise after a 0.5 s lead-in (8 voices,
 * 4 rates, the demo home's grammar): 26 and 22 of 32 right with the fill at
 * -60 dBFS, 4 and 0 of 32 without it, 3 and 0 at -66 dBFS. The real fixture
 * recordings have floors of -32 to -68 dBFS.
 */
export const FLOOR_FILL_DB = -60;

/**
 * The least speech level the decoder is given, dBFS: the 95th percentile of
 * an utterance's 10 ms frame energies. A quieter utterance is raised to it
 * (by at most MAX_GAIN_DB, and never so far that its loudest sample clips)
 * before the dither and the floor fill, which are set in absolute units and
 * would otherwise drown a quiet voice. A microphone far from the speaker or
 * with its gain turned down: the fixture recordings at `sox vol 0.05` (26 dB
 * quieter; speech at -37 to -60 dBFS) were 12 of 20 right with 3 wrong
 * actions ("set a timer for 30 seconds" started a 2-second timer, "50
 * percent" set 2 percent, "3 hours and 10 minutes" became "3 hours and a
 * minute"); raised by 26 dB again with sox, 16 right and none wrong. With
 * the endpointer hearing quiet speech too (vad.ts DEFAULT_MIN_ENERGY_DB at
 * -65): 15 right with this gain, 13 without it (at `vol 0.1`: 16 and 14),
 * none wrong. The fixture recordings themselves have speech at -11 to -34 dBFS;
 * the confusion set's 480 decodes did not change.
 */
export const SPEECH_LEVEL_DB = -25;

/** The most a quiet utterance is raised, dB (SPEECH_LEVEL_DB): room noise alone is not made speech-loud. */
const MAX_GAIN_DB = 30;

/** Frame length for the energy analysis: 10 ms at 16 kHz. */
const FRAME = 160;

/**
 * A frame whose samples vary less than this around their own mean (variance,
 * LSB²: RMS 2 LSB, about -84 dBFS) is digital silence: a file padded with
 * zeros (`sox ... pad 0.5 1`), a microphone that gates its pauses to zero.
 * prepareUtterance fills such frames at the ends of a recording with its own
 * quietest stretch of room noise, repeated (PAD_TILE_FRAMES): a newcomer padded a real recording whose room noise is at -34 dBFS with 1.5 s
 * of zeros, the fill brought the padding only to FLOOR_FILL_DB, and "set a
 * timer for 3 hours and 10 minutes" was heard "... 3 hours and a minute" and
 * started (4 of 4; unpadded it was right).
 */
const DEAD_FRAME_VARIANCE = 4;

/**
 * Padding that is not exact digital silence: runs at the start and the end of
 * a recording whose frames are all under NEAR_SILENCE_DB and at least this
 * many dB under the quietest 100 ms of the audio between them, dB.
 * A tester padded real recordings with white noise of +-3 LSB (about -84
 * dBFS, under DEAD_FRAME_VARIANCE in some frames and over it in others) in
 * place of zeros: the padding was taken for part of the utterance, its floor
 * for the room's, and the room noise counted as speech (9 of the 20 fixture
 * recordings right, "set a timer for 3 hours and 10 minutes" started "... and
 * a minute"). Such runs are padding as zeros are (prepareUtterance).
 */
const PAD_STEP_DB = 12;

/**
 * The loudest frame near-silent padding may hold, dBFS RMS (PAD_STEP_DB):
 * about 10 LSB. Room noise itself is louder (the fixture recordings' floors:
 * -32 to -68 dBFS; the confusion set's: -50). Without this bound the room
 * noise before and after a short command with no pause inside ("next
 * track") was taken for padding, 12 dB under the quietest 100 ms of the
 * speech, and replaced by that speech: the confusion set's right commands
 * fell from 88.5 to 40.6 %.
 */
const NEAR_SILENCE_DB = -70;

/** How far under its median frame a padded recording's own floor must be for the padding to get that floor, dB (see prepareUtterance). */
const PADDED_FLOOR_DB = 3;

/** Frames of a padded recording's own quietest stretch that its padding repeats (prepareUtterance): 100 ms. */
const PAD_TILE_FRAMES = 10;

/**
 * The quietest run of `win` consecutive frames of `energy` (any per-frame
 * energy, one number per frame) that lies within frames [from, to): its first
 * frame and the sum of its energies. The first such run wins a tie. Undefined
 * when fewer than `win` frames lie there. Used for the room noise that pads a
 * recording (prepareUtterance) and a speculative pass (padSilence).
 */
export function quietestWindow(energy: ArrayLike<number>, win: number, from = 0, to = energy.length): { at: number; sum: number } | undefined {
  let found: { at: number; sum: number } | undefined;
  for (let f = Math.max(0, from); f + win <= Math.min(to, energy.length); f++) {
    let sum = 0;
    for (let k = f; k < f + win; k++) sum += energy[k]!;
    if (!found || sum < found.sum) found = { at: f, sum };
  }
  return found;
}

/**
 * Mark near-silent padding (PAD_STEP_DB) in `dead` (one flag per frame, 1 =
 * digital silence): the runs at the start and the end of `energy` (mean
 * square per frame, of the samples as recorded) whose frames are dead or
 * under NEAR_SILENCE_DB, when they lie PAD_STEP_DB or more under the quietest
 * PAD_TILE_FRAMES of the frames between them. Nothing changes otherwise.
 */
function quietEnds(energy: readonly number[], dead: Uint8Array): void {
  const near = (32768 * 10 ** (NEAR_SILENCE_DB / 20)) ** 2;
  const padLike = (f: number): boolean => dead[f] === 1 || energy[f]! <= near;
  let a = 0;
  while (a < energy.length && padLike(a)) a++;
  let b = energy.length;
  while (b > a && padLike(b - 1)) b--;
  if (a === 0 && b === energy.length) return;
  const between = quietestWindow(energy, PAD_TILE_FRAMES, a, b);
  if (!between) return;
  let loudest = 0;
  for (let f = 0; f < energy.length; f++) if (f < a || f >= b) loudest = Math.max(loudest, energy[f]!);
  if (10 * Math.log10((1 + between.sum / PAD_TILE_FRAMES) / (1 + loudest)) < PAD_STEP_DB) return;
  for (let f = 0; f < energy.length; f++) if (f < a || f >= b) dead[f] = 1;
}

/** Options of prepareUtterance. */
export interface PrepOptions {
  /** A leading burst may start no later than this, ms; default 300. */
  maxBurstStartMs?: number;
  /** ...and last at most this long, ms; default 400. */
  maxBurstMs?: number;
  /** ...and must be followed by at least this much quiet before speech, ms; default 150. */
  minGapMs?: number;
  /** A frame is active when its energy is this many dB above the utterance's floor; default 9. */
  activeDb?: number;
  /**
   * Add a triangular dither of +-1 LSB (default true), so that no frame has
   * zero energy (Kaldi's feature extraction dithers by default for the same
   * reason; pocketsphinx has `-dither`, off by default and random). It does
   * not help the decoder by itself; see floorDb.
   */
  dither?: boolean;
  /**
   * Noise floor to fill up to, dBFS RMS (default FLOOR_FILL_DB); -Infinity
   * turns the fill off. See FLOOR_FILL_DB.
   */
  floorDb?: number;
  /** Raise a quiet utterance to SPEECH_LEVEL_DB first (default true). */
  level?: boolean;
}

/** What prepareUtterance did. */
export interface PrepReport {
  /** Samples dropped from the start (a leading burst and the quiet after it, up to `keepMs` of silence). */
  droppedSamples: number;
  /** How much a quiet utterance was raised, dB (SPEECH_LEVEL_DB); 0 when it was loud enough. */
  gainDb: number;
}

/**
 * The gain (a factor, at least 1) that raises `src` (16-bit samples, DC
 * offset `mean`) to SPEECH_LEVEL_DB, at most MAX_GAIN_DB and short of
 * clipping its loudest sample; 1 when it is loud enough or shorter than a frame.
 */
export function levelGain(src: Int16Array, mean: number): number {
  let peak = 0;
  for (let i = 0; i < src.length; i++) peak = Math.max(peak, Math.abs(src[i]! - mean));
  const e: number[] = [];
  for (let i = 0; i + FRAME <= src.length; i += FRAME) {
    let sum = 0;
    for (let j = i; j < i + FRAME; j++) sum += (src[j]! - mean) ** 2;
    e.push(sum / FRAME);
  }
  if (e.length === 0 || peak === 0) return 1;
  e.sort((a, b) => a - b);
  const level = 10 * Math.log10(e[Math.floor(e.length * 0.95)]! / 32768 ** 2 + 1e-12);
  if (level >= SPEECH_LEVEL_DB) return 1;
  return Math.max(1, Math.min(10 ** ((SPEECH_LEVEL_DB - level) / 20), 10 ** (MAX_GAIN_DB / 20), 32000 / peak));
}

function frameDb(pcm: Int16Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + FRAME <= pcm.length; i += FRAME) {
    let sum = 0;
    for (let j = i; j < i + FRAME; j++) sum += pcm[j]! * pcm[j]!;
    out.push(10 * Math.log10(1 + sum / FRAME));
  }
  return out;
}

/** Runs of consecutive active frames, as [start, end) frame indices, with gaps shorter than `bridge` frames merged. */
function activeRuns(active: boolean[], bridge: number): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let i = 0;
  while (i < active.length) {
    if (!active[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < active.length && active[j]) j++;
    const last = runs[runs.length - 1];
    if (last && i - last[1] < bridge) last[1] = j;
    else runs.push([i, j]);
    i = j;
  }
  return runs;
}

/**
 * Clean one utterance: remove the DC offset and drop a short leading burst
 * (starts in the first `maxBurstStartMs`, lasts at most `maxBurstMs`, then at
 * least `minGapMs` of quiet, then more speech). Returns new s16le PCM.
 */
export function prepareUtterance(pcmBytes: Buffer, opts: PrepOptions = {}): { pcm: Buffer; report: PrepReport } {
  const n = Math.floor(pcmBytes.length / 2);
  const src = new Int16Array(n);
  for (let i = 0; i < n; i++) src[i] = pcmBytes.readInt16LE(i * 2);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += src[i]!;
  mean = n > 0 ? mean / n : 0;
  const gain = opts.level === false ? 1 : levelGain(src, mean);
  const pcm = new Int16Array(n);
  // Dither: a triangular (TPDF) noise of +-1 LSB, the same for the same input (a fixed-seed xorshift).
  let rand = 0x9e3779b9;
  const next = (): number => {
    rand ^= rand << 13;
    rand ^= rand >>> 17;
    rand ^= rand << 5;
    return (rand >>> 0) / 0x100000000;
  };
  // Floor fill: white noise that raises a quieter floor to floorDb. A recording padded with zeros at its ends
  // (DEAD_FRAME_VARIANCE) has its floor measured without the padding, and the padding gets noise at that floor (or
  // floorDb, if louder), so that one utterance does not hold two noise levels.
  const floorDb = opts.floorDb ?? FLOOR_FILL_DB;
  let fillAmp = 0;
  let deadAmp = 0;
  let tileAt = -1;
  const dead = new Uint8Array(Math.floor(n / FRAME));
  if (Number.isFinite(floorDb) && n >= FRAME) {
    const e: number[] = [];
    const raw: number[] = [];
    const live: number[] = [];
    for (let f = 0, i = 0; i + FRAME <= n; f++, i += FRAME) {
      let sum = 0;
      let own = 0;
      for (let j = i; j < i + FRAME; j++) {
        sum += (src[j]! - mean) ** 2;
        own += src[j]!;
      }
      own /= FRAME;
      let v = 0;
      for (let j = i; j < i + FRAME; j++) v += (src[j]! - own) ** 2;
      dead[f] = v / FRAME < DEAD_FRAME_VARIANCE ? 1 : 0;
      raw.push(sum / FRAME);
      e.push((sum / FRAME) * gain * gain);
      if (!dead[f]) live.push(sum / FRAME);
    }
    quietEnds(raw, dead);
    live.length = 0;
    for (let f = 0; f < e.length; f++) if (!dead[f]) live.push(e[f]!);
    // Padding: digital silence only in runs at the start and the end, around audio of the recording's own that has
    // a floor under its speech (its 10th percentile frame at least PADDED_FLOOR_DB under its median). Anything else
    // (zeros between words, a synthesised file, a pure tone, a click in zeros) is filled as before, from all frames.
    let first = 0;
    while (first < dead.length && dead[first]) first++;
    let last = dead.length - 1;
    while (last >= first && dead[last]) last--;
    let inner = false;
    for (let f = first; f <= last && !inner; f++) inner = dead[f] === 1;
    const sortedLive = [...live].sort((a, b) => a - b);
    const liveFloor = sortedLive[Math.floor(sortedLive.length * 0.1)] ?? 0;
    const liveMedian = sortedLive[Math.floor(sortedLive.length / 2)] ?? 0;
    const padded = live.length >= 10 && live.length < e.length && !inner && 10 * Math.log10((1 + liveMedian) / (1 + liveFloor)) >= PADDED_FLOOR_DB;
    if (!padded) dead.fill(0);
    const measured = padded ? sortedLive : e.sort((a, b) => a - b);
    const floor = measured[Math.floor(measured.length * 0.1)]!;
    const want = (32768 * 10 ** (floorDb / 20)) ** 2;
    if (floor < want) fillAmp = Math.sqrt(want - floor) * Math.sqrt(3);
    if (padded) {
      // The recording's own quietest PAD_TILE_FRAMES (its room noise), repeated: white noise at the same level had
      // another spectrum, and a padded "set a timer for 30 seconds" came out "hold the timer ...".
      const tile = quietestWindow(e, PAD_TILE_FRAMES, first, last + 1);
      if (tile) tileAt = tile.at * FRAME;
      // Too little audio of its own for a stretch that long: white noise at its floor.
      else deadAmp = Math.sqrt(Math.max(floor, want)) * Math.sqrt(3);
    }
  }
  for (let i = 0; i < n; i++) {
    const dither = opts.dither === false ? 0 : next() - next();
    const isDead = dead[Math.floor(i / FRAME)] === 1;
    const amp = isDead ? deadAmp : fillAmp;
    const fill = amp > 0 ? (next() * 2 - 1) * amp : 0;
    const own = isDead && tileAt >= 0 ? src[tileAt + (i % (PAD_TILE_FRAMES * FRAME))]! : src[i]!;
    pcm[i] = Math.max(-32768, Math.min(32767, Math.round((own - mean) * gain + dither + fill)));
  }

  let drop = 0;
  const db = frameDb(pcm);
  if (db.length > 0) {
    const sorted = [...db].sort((a, b) => a - b);
    const floor = sorted[Math.floor(sorted.length * 0.1)]!;
    const active = db.map((v) => v > floor + (opts.activeDb ?? 9));
    const ms = (x: number): number => Math.round(x / 10);
    const runs = activeRuns(active, ms(60));
    const first = runs[0];
    const next = runs[1];
    if (
      first &&
      next &&
      first[0] <= ms(opts.maxBurstStartMs ?? 300) &&
      first[1] - first[0] <= ms(opts.maxBurstMs ?? 400) &&
      next[0] - first[1] >= ms(opts.minGapMs ?? 150)
    ) {
      // Keep the quiet gap (minus 50 ms of the burst's decay) as leading silence.
      drop = Math.min(next[0], first[1] + ms(50)) * FRAME;
    }
  }
  const out = Buffer.alloc((n - drop) * 2);
  for (let i = drop; i < n; i++) out.writeInt16LE(pcm[i]!, (i - drop) * 2);
  return { pcm: out, report: { droppedSamples: drop, gainDb: 20 * Math.log10(gain) } };
}
