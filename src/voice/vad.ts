/**
 * Endpointing: voice activity detection on 16 kHz mono s16le PCM, written
 * for this project. Each 20 ms frame gets an energy (dBFS) and a
 * zero-crossing rate. The noise floor is the minimum frame energy over the
 * last `floorWindowMs` (minimum statistics: pauses between words keep it at
 * the background level even while someone talks). A frame is speech when it
 * is `thresholdDb` above the floor and above `minEnergyDb`; a quieter frame
 * with a high zero-crossing rate (fricatives: s, f, sh) still counts as
 * speech inside an utterance.
 *
 * Rules, all in audio time (ms of samples pushed, never wall time, so the
 * same audio always gives the same answer):
 * - speech starts after `minSpeechMs` of speech frames (one gap frame allowed);
 * - after `speculateMs` without speech a 'lull' event lets the recogniser
 *   start its final pass on what was said so far, and after `pauseMs` a
 *   'pause' event says the silence is long enough to act on a sure result
 *   (without `speculateMs` the pass starts at the 'pause'); speech after
 *   either gives 'resume';
 * - the utterance ends after `silenceMs` without speech ('silence'), or
 *   `maxUtteranceMs` after speech started ('max_length');
 * - with no speech at all for `noSpeechTimeoutMs` it ends with 'no_speech',
 *   so noise never keeps it listening forever.
 */

/**
 * The level a speech frame must exceed besides the noise floor margin,
 * dBFS (20 ms frames; setting plugin.voice.vad_min_energy_db). Lower hears a
 * quieter voice: the fixture recordings made 26 dB quieter (`sox vol 0.05`:
 * speech at -37 to -60 dBFS, a microphone turned down or across the room)
 * lose their quiet words at -50 (12 of 20 right, 2 wrong actions: "3 hours
 * and 10 minutes" heard "3 hours and a minute"), at -65 15 right and none
 * wrong. But at -65 room noise at -50 dBFS, as in the e2e tests, started
 * an utterance of its own after two commands said in one breath ("Sorry, I
 * didn't catch that." after both had acted), and a tester's recordings 34
 * to 40 dB quieter were heard and acted on wrongly (a running timer paused
 * for "set a timer for 30 seconds", its "s" lost in the quantisation)
 * where at -50 nothing was heard. So -50 stays the default.
 */
export const DEFAULT_MIN_ENERGY_DB = -50;

/** Endpointer settings; times in ms, levels in dBFS / dB. */
export interface EndpointerOptions {
  /** Hz (default 16000). */
  sampleRate?: number;
  /** Analysis frame, ms (default 20). */
  frameMs?: number;
  /** Silence that ends an utterance, ms (default 800). */
  silenceMs?: number;
  /** Silence after which a 'pause' event lets the recogniser start its final pass early, ms (default 300; 0 or >= silenceMs: no pause events). */
  pauseMs?: number;
  /** Silence after which a 'lull' event lets the recogniser start that pass before the 'pause', ms (default 0: none; only below pauseMs). */
  speculateMs?: number;
  /** Longest utterance after speech started, ms (default 15000). */
  maxUtteranceMs?: number;
  /** Give up when no speech started within this much audio, ms (default 8000). */
  noSpeechTimeoutMs?: number;
  /** Speech needed before an utterance counts as started, ms (default 120). */
  minSpeechMs?: number;
  /** Margin above the noise floor for a speech frame, dB (default 10). */
  thresholdDb?: number;
  /** Absolute level a speech frame must exceed, dBFS (default DEFAULT_MIN_ENERGY_DB). */
  minEnergyDb?: number;
  /** Window of the minimum-statistics noise floor, ms (default 1500). */
  floorWindowMs?: number;
  /** Zero-crossing rate (crossings per sample, 0..1) above which a quiet frame is a fricative (default 0.3). */
  fricativeZcr?: number;
}

/** Why an utterance ended. 'stream_end': the audio ran out; 'forced': finish() was called (push-to-talk release). */
/**
 * Why an utterance ended. The endpointer decides all but 'early', which the
 * capture decides: the recogniser was sure of a complete command at the
 * first pause (issue 15 "Grammar-aware endpointing", src/voice/capture.ts).
 */
export type EndReason = 'silence' | 'max_length' | 'no_speech' | 'stream_end' | 'forced' | 'early';

/** What the endpointer found. Positions are ms of audio from the first sample pushed. */
export type EndpointEvent =
  | { type: 'speech_start'; at_ms: number }
  /** `speculateMs` of silence inside an utterance: it may be ending (speech_end_ms: the last speech frame's end). */
  | { type: 'lull'; speech_end_ms: number; decided_at_ms: number }
  /** `pauseMs` of silence inside an utterance: it may be over (speech_end_ms: the last speech frame's end). */
  | { type: 'pause'; speech_end_ms: number; decided_at_ms: number }
  /** Speech again after a 'lull' or a 'pause'. */
  | { type: 'resume'; at_ms: number }
  | {
      type: 'end';
      reason: EndReason;
      /** Where speech started, when it did. */
      speech_start_ms?: number;
      /** Where the last speech frame ended (for 'no_speech': where listening gave up). */
      speech_end_ms: number;
      /** Audio position at which the decision was made. */
      decided_at_ms: number;
    };

/** Features of one frame: energy in dBFS (RMS re full scale; -100 for digital silence) and zero crossings per sample. */
export interface FrameFeatures {
  energyDb: number;
  zcr: number;
}

/** Energy (dBFS) and zero-crossing rate of s16le samples in `pcm[offset, offset+bytes)`. */
export function frameFeatures(pcm: Buffer, offset = 0, bytes = pcm.length - offset): FrameFeatures {
  const n = Math.floor(bytes / 2);
  if (n === 0) return { energyDb: -100, zcr: 0 };
  let sum = 0;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += pcm.readInt16LE(offset + i * 2);
  mean /= n;
  let crossings = 0;
  let prev = pcm.readInt16LE(offset) - mean;
  for (let i = 0; i < n; i++) {
    const s = pcm.readInt16LE(offset + i * 2) - mean;
    sum += s * s;
    if ((s >= 0) !== (prev >= 0)) crossings++;
    prev = s;
  }
  const rms = Math.sqrt(sum / n) / 32768;
  return { energyDb: rms > 1e-5 ? 20 * Math.log10(rms) : -100, zcr: crossings / n };
}

type State = 'waiting' | 'speech' | 'done';

/** Incremental endpointer for one utterance. Feed with push(); the 'end' event comes once. */
export class Endpointer {
  private readonly o: Required<EndpointerOptions>;
  private readonly frameBytes: number;
  private rest: Buffer = Buffer.alloc(0);
  private frames = 0;
  private readonly history: number[] = [];
  private readonly historyLen: number;
  private state: State = 'waiting';
  private run = 0;
  private gap = 0;
  private runStart = 0;
  private speechStart = 0;
  private lastSpeechEnd = 0;
  /** A 'pause' was sent for the current gap. */
  private paused = false;
  /** A 'lull' was sent for the current gap. */
  private lulled = false;

  constructor(opts: EndpointerOptions = {}) {
    this.o = {
      sampleRate: opts.sampleRate ?? 16000,
      frameMs: opts.frameMs ?? 20,
      silenceMs: opts.silenceMs ?? 800,
      pauseMs: opts.pauseMs ?? 300,
      speculateMs: opts.speculateMs ?? 0,
      maxUtteranceMs: opts.maxUtteranceMs ?? 15000,
      noSpeechTimeoutMs: opts.noSpeechTimeoutMs ?? 8000,
      minSpeechMs: opts.minSpeechMs ?? 120,
      thresholdDb: opts.thresholdDb ?? 10,
      minEnergyDb: opts.minEnergyDb ?? DEFAULT_MIN_ENERGY_DB,
      floorWindowMs: opts.floorWindowMs ?? 1500,
      fricativeZcr: opts.fricativeZcr ?? 0.3,
    };
    this.frameBytes = Math.round((this.o.sampleRate * this.o.frameMs) / 1000) * 2;
    this.historyLen = Math.max(1, Math.round(this.o.floorWindowMs / this.o.frameMs));
  }

  /** Silence after which a 'pause' comes, ms (the option, defaulted). */
  get pauseMs(): number {
    return this.o.pauseMs;
  }

  /** Silence after which a 'lull' comes, ms (0: none). */
  get speculateMs(): number {
    return this.o.speculateMs;
  }

  /** Audio consumed so far, ms. */
  get positionMs(): number {
    return this.frames * this.o.frameMs;
  }

  /** True once speech has started. */
  get inSpeech(): boolean {
    return this.state === 'speech';
  }

  /** True after the 'end' event. */
  get done(): boolean {
    return this.state === 'done';
  }

  /** Current noise floor estimate, dBFS (-100 before the first frame). */
  get noiseFloorDb(): number {
    return this.history.length ? Math.min(...this.history) : -100;
  }

  /** Feed PCM of any length; returns the events it caused, in order. Nothing after 'end'. */
  push(pcm: Buffer): EndpointEvent[] {
    if (this.state === 'done') return [];
    const buf = this.rest.length ? Buffer.concat([this.rest, pcm]) : pcm;
    const out: EndpointEvent[] = [];
    let off = 0;
    while (off + this.frameBytes <= buf.length && !this.done) {
      const ev = this.frame(frameFeatures(buf, off, this.frameBytes));
      if (ev) out.push(...ev);
      off += this.frameBytes;
    }
    this.rest = this.done ? Buffer.alloc(0) : Buffer.from(buf.subarray(off));
    return out;
  }

  /**
   * End now (push-to-talk released, stream ended). Returns the 'end' event, or
   * undefined when it already ended. reason 'forced' by default.
   */
  finish(reason: 'forced' | 'stream_end' = 'forced'): EndpointEvent | undefined {
    if (this.state === 'done') return undefined;
    const pos = this.positionMs;
    const started = this.state === 'speech';
    this.state = 'done';
    if (!started) return { type: 'end', reason: 'no_speech', speech_end_ms: pos, decided_at_ms: pos };
    return { type: 'end', reason, speech_start_ms: this.speechStart, speech_end_ms: this.gap > 0 ? this.lastSpeechEnd : pos, decided_at_ms: pos };
  }

  private isSpeech(f: FrameFeatures, floor: number): boolean {
    const loud = f.energyDb > floor + this.o.thresholdDb && f.energyDb > this.o.minEnergyDb;
    if (loud || this.state !== 'speech') return loud;
    return f.zcr > this.o.fricativeZcr && f.energyDb > floor + this.o.thresholdDb / 2 && f.energyDb > this.o.minEnergyDb;
  }

  private frame(f: FrameFeatures): EndpointEvent[] | undefined {
    const start = this.positionMs;
    this.frames++;
    const end = this.positionMs;
    const floor = this.history.length ? Math.min(...this.history) : f.energyDb;
    const calibrating = this.history.length < 3;
    this.history.push(f.energyDb);
    if (this.history.length > this.historyLen) this.history.shift();
    const speech = !calibrating && this.isSpeech(f, floor);
    const fm = this.o.frameMs;

    if (this.state === 'waiting') {
      if (speech) {
        if (this.run === 0) this.runStart = start;
        this.run++;
        this.gap = 0;
      } else if (this.run > 0 && this.gap === 0) {
        this.gap = 1; // one gap frame tolerated
      } else {
        this.run = 0;
        this.gap = 0;
      }
      if (this.run * fm >= this.o.minSpeechMs) {
        this.state = 'speech';
        this.speechStart = this.runStart;
        this.lastSpeechEnd = end;
        this.gap = 0;
        const evs: EndpointEvent[] = [{ type: 'speech_start', at_ms: this.speechStart }];
        return evs;
      }
      if (end >= this.o.noSpeechTimeoutMs) {
        this.state = 'done';
        return [{ type: 'end', reason: 'no_speech', speech_end_ms: end, decided_at_ms: end }];
      }
      return undefined;
    }

    // in speech
    const events: EndpointEvent[] = [];
    if (speech) {
      if (this.paused || this.lulled) events.push({ type: 'resume', at_ms: start });
      this.paused = false;
      this.lulled = false;
      this.lastSpeechEnd = end;
      this.gap = 0;
    } else {
      this.gap++;
    }
    if (this.gap * fm >= this.o.silenceMs) {
      this.state = 'done';
      return [{ type: 'end', reason: 'silence', speech_start_ms: this.speechStart, speech_end_ms: this.lastSpeechEnd, decided_at_ms: end }];
    }
    if (end - this.speechStart >= this.o.maxUtteranceMs) {
      this.state = 'done';
      return [...events, { type: 'end', reason: 'max_length', speech_start_ms: this.speechStart, speech_end_ms: this.lastSpeechEnd, decided_at_ms: end }];
    }
    const pausing = this.o.pauseMs > 0 && this.o.pauseMs < this.o.silenceMs;
    if (!this.lulled && pausing && this.o.speculateMs > 0 && this.o.speculateMs < this.o.pauseMs && this.gap * fm >= this.o.speculateMs) {
      this.lulled = true;
      events.push({ type: 'lull', speech_end_ms: this.lastSpeechEnd, decided_at_ms: end });
    }
    if (!this.paused && pausing && this.gap * fm >= this.o.pauseMs) {
      this.paused = true;
      events.push({ type: 'pause', speech_end_ms: this.lastSpeechEnd, decided_at_ms: end });
    }
    return events.length > 0 ? events : undefined;
  }
}
