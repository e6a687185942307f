/**
 * Audio clean-up before the final decode of an utterance (16 kHz mono s16le):
 * DC removal and dropping a short leading transient. A push-to-talk press or
 * a wake-word hand-over often leaves a click or burst in the first few
 * hundred ms, followed by a quiet gap before the person speaks; the decoder
 * otherwise spends grammar words on that burst ("timer a hour ..." for the
 * click before "set a timer ..."). Everything is decided from frame energies
 * of the utterance itself, nothing is tuned per recording.
 */

/** Frame length for the energy analysis: 10 ms at 16 kHz. */
const FRAME = 160;

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
  for (let i = 0; i < n; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(src[i]! - mean)));

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
