/**
 * Audio clean-up before the final decode of an utterance (16 kHz mono s16le):
 * DC removal, a 1-LSB dither, a noise floor no quieter than FLOOR_FILL_DB,
 * digital-silence padding at the ends filled with the recording's own room
 * noise, and dropping a short leading transient. A push-to-talk press or
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
}

/** What prepareUtterance did. */
export interface PrepReport {
  /** Samples dropped from the start (a leading burst and the quiet after it, up to `keepMs` of silence). */
  droppedSamples: number;
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
      e.push(sum / FRAME);
      if (!dead[f]) live.push(sum / FRAME);
    }
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
    pcm[i] = Math.max(-32768, Math.min(32767, Math.round(own - mean + dither + fill)));
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
  return { pcm: out, report: { droppedSamples: drop } };
}
