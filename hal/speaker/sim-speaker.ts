/**
 * The simulated speaker: "plays" each utterance in (scaled) real time on a
 * clock, writes what a listener would have heard to a WAV file under its
 * directory and appends one JSON line per utterance to `speaker.jsonl`
 * ({id, text, file, started_at, ended_at, cut_at, completed, played_ms,
 * total_ms, ...}) so tests can check what was said and when it was cut.
 */
import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import { bytesPerMs, pcmDurationMs } from '../common/pcm.js';
import { encodeWav } from '../common/wav.js';
import { QueueSpeaker, type SpeakerBackend, type Utterance } from './queue-speaker.js';

/** One utterance as the simulator played it. Times are the speaker clock's wall time, ms since the epoch. */
export interface SimPlayback {
  id: string;
  text?: string;
  /** WAV file of what was heard (absolute path). */
  file: string;
  sample_rate: number;
  channels: number;
  volume: number;
  started_at: number;
  ended_at: number;
  /** Clock time of the cut, when stop() cut it. */
  cut_at?: number;
  completed: boolean;
  /** Audio heard before the end or the cut, ms. */
  played_ms: number;
  /** Audio received for the utterance, ms. */
  total_ms: number;
}

/** Options: output directory (created), playback speed (1 = real time; 0 = instant), clock (default: the system clock). */
export interface SimSpeakerOptions {
  dir: string;
  speed?: number;
  clock?: Clock;
  volume?: number;
}

/** The highest `NNNN-` number among the WAV files in `dir` (0 when none). */
function lastNumber(dir: string): number {
  let last = 0;
  for (const f of readdirSync(dir)) {
    const m = /^(\d+)-.*\.wav$/.exec(f);
    if (m) last = Math.max(last, Number(m[1]));
  }
  return last;
}

class SimBackend implements SpeakerBackend {
  readonly history: SimPlayback[] = [];
  private seq = 0;
  private cancel: (() => void) | undefined;
  private playing: Promise<unknown> | undefined;
  volume = () => 100;

  constructor(private readonly dir: string, private readonly speed: number, private readonly clock: Clock) {
    mkdirSync(dir, { recursive: true });
    // Numbered on from the files an earlier run left: starting at 0001 again overwrote them, and their
    // speaker.jsonl lines then named WAVs of other speech (a newcomer's 61 lines named 42 files).
    this.seq = lastNumber(dir);
  }

  private wait(ms: number): Promise<boolean> {
    if (ms <= 0 || this.speed === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let t: TimerHandle | undefined = this.clock.setTimeout(() => {
        t = undefined;
        this.cancel = undefined;
        resolve(true);
      }, ms / this.speed, { keepAlive: true });
      this.cancel = () => {
        this.clock.clearTimeout(t);
        this.cancel = undefined;
        resolve(false);
      };
    });
  }

  async play(u: Utterance): Promise<boolean> {
    let resolvePlaying!: () => void;
    this.playing = new Promise<void>((r) => (resolvePlaying = r));
    const started = this.clock.now();
    const heard: Buffer[] = [];
    let total = 0;
    let cutAt: number | undefined;
    for await (const chunk of u.chunks()) {
      total += chunk.length;
      const chunkStart = this.clock.monotonic();
      const ok = await this.wait(pcmDurationMs(chunk.length, u.sampleRate, u.channels));
      if (ok) {
        heard.push(chunk);
        continue;
      }
      cutAt = this.clock.now();
      const frame = 2 * u.channels;
      const playedBytes = Math.floor(((this.clock.monotonic() - chunkStart) * this.speed * bytesPerMs(u.sampleRate, u.channels)) / frame) * frame;
      heard.push(chunk.subarray(0, Math.min(chunk.length, playedBytes)));
      break;
    }
    if (u.aborted && cutAt === undefined) cutAt = this.clock.now();
    const pcm = Buffer.concat(heard);
    const file = path.join(this.dir, `${String(++this.seq).padStart(4, '0')}-${u.id.replace(/[^\w.-]/g, '_')}.wav`);
    writeFileSync(file, encodeWav(pcm, { sampleRate: u.sampleRate, channels: u.channels }));
    const rec: SimPlayback = {
      id: u.id,
      ...(u.text !== undefined ? { text: u.text } : {}),
      file,
      sample_rate: u.sampleRate,
      channels: u.channels,
      volume: this.volume(),
      started_at: started,
      ended_at: this.clock.now(),
      ...(cutAt !== undefined ? { cut_at: cutAt } : {}),
      completed: cutAt === undefined,
      played_ms: pcmDurationMs(pcm.length, u.sampleRate, u.channels),
      total_ms: pcmDurationMs(total, u.sampleRate, u.channels),
    };
    this.history.push(rec);
    appendFileSync(path.join(this.dir, 'speaker.jsonl'), `${JSON.stringify(rec)}\n`);
    this.playing = undefined;
    resolvePlaying();
    return rec.completed;
  }

  async abort(): Promise<void> {
    const playing = this.playing;
    this.cancel?.();
    await playing;
  }
}

/** The simulated speaker. `history` lists every utterance played (also in `<dir>/speaker.jsonl`). */
export class SimSpeaker extends QueueSpeaker {
  readonly kind = 'sim' as const;
  readonly dir: string;
  private readonly sim: SimBackend;

  constructor(opts: SimSpeakerOptions) {
    const clock = opts.clock ?? systemClock;
    const backend = new SimBackend(opts.dir, opts.speed ?? 1, clock);
    super(backend, clock, opts.volume ?? 100);
    this.sim = backend;
    this.dir = opts.dir;
    backend.volume = () => this.volume;
  }

  /** Every utterance played so far, in order. */
  get history(): readonly SimPlayback[] {
    return this.sim.history;
  }
}
