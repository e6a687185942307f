/**
 * The queue shared by every speaker: utterances in order, one playing at a
 * time, volume applied as PCM is pulled, stop() drops the queue and asks the
 * backend to cut the current one. Backends only know how to play one
 * utterance from an async chunk source and how to abort it.
 */
import { EventEmitter } from 'node:events';
import type { Clock } from '../../src/kernel/clock.js';
import { applyVolume, EARCONS, generateTones, type EarconName } from '../common/pcm.js';
import { SpeakerError, type PlayOptions, type PlayResult, type Speaker, type SpeakerEvents, type SpeakerStopReport, type SpeakerStream } from './types.js';

/** One queued utterance as a backend sees it. */
export interface Utterance {
  readonly id: string;
  readonly text?: string;
  readonly sampleRate: number;
  readonly channels: number;
  /** Yields PCM chunks (volume applied) until the utterance ends or is aborted. */
  chunks(): AsyncGenerator<Buffer>;
  /** Set once stop() cut this utterance. */
  readonly aborted: boolean;
}

/** Plays one utterance; resolves true when it played to the end. Abort is requested through `abort()`. */
export interface SpeakerBackend {
  play(u: Utterance): Promise<boolean>;
  /** Cut the current utterance now; resolves when the player has exited. */
  abort(): Promise<void>;
}

class QueuedUtterance implements Utterance {
  readonly channels: number;
  readonly sampleRate: number;
  readonly id: string;
  readonly text?: string;
  aborted = false;
  ended = false;
  private pending: Buffer[] = [];
  private wake: (() => void) | undefined;
  resolve!: (r: PlayResult) => void;
  reject!: (e: unknown) => void;
  readonly done: Promise<PlayResult>;

  constructor(opts: PlayOptions, id: string, private readonly volume: () => number) {
    this.id = id;
    this.text = opts.text;
    this.sampleRate = opts.sampleRate;
    this.channels = opts.channels ?? 1;
    this.done = new Promise<PlayResult>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  push(pcm: Buffer): boolean {
    if (this.ended || this.aborted) return false;
    if (pcm.length > 0) this.pending.push(pcm);
    this.poke();
    return true;
  }

  finish(): void {
    this.ended = true;
    this.poke();
  }

  abort(): void {
    this.aborted = true;
    this.pending = [];
    this.poke();
  }

  private poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *chunks(): AsyncGenerator<Buffer> {
    for (;;) {
      if (this.aborted) return;
      const next = this.pending.shift();
      if (next) {
        yield applyVolume(next, this.volume());
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => (this.wake = r));
    }
  }
}

function checkFormat(opts: PlayOptions): void {
  const ch = opts.channels ?? 1;
  if (!Number.isInteger(opts.sampleRate) || opts.sampleRate < 1000 || opts.sampleRate > 192000) {
    throw new SpeakerError('SPEAKER_BAD_FORMAT', `sample rate ${opts.sampleRate} Hz is not between 1000 and 192000`);
  }
  if (!Number.isInteger(ch) || ch < 1 || ch > 8) throw new SpeakerError('SPEAKER_BAD_FORMAT', `channel count ${ch} is not between 1 and 8`);
}

/** Base class of all speakers; subclasses provide the backend and `kind`. */
export abstract class QueueSpeaker extends EventEmitter<SpeakerEvents> implements Speaker {
  abstract readonly kind: 'aplay' | 'sox' | 'sim';
  private queue: QueuedUtterance[] = [];
  private current: QueuedUtterance | undefined;
  private seq = 0;
  private vol: number;
  private closed = false;

  protected constructor(protected readonly backend: SpeakerBackend, protected readonly clock: Clock, volume = 100) {
    super();
    this.vol = volume;
  }

  get isPlaying(): boolean {
    return this.current !== undefined;
  }

  get queued(): number {
    return this.queue.length;
  }

  get volume(): number {
    return this.vol;
  }

  setVolume(volume: number): void {
    if (!Number.isFinite(volume) || volume < 0 || volume > 100) throw new SpeakerError('SPEAKER_BAD_VOLUME', `volume ${volume} is not between 0 and 100`);
    this.vol = Math.round(volume);
  }

  openStream(opts: PlayOptions): SpeakerStream {
    if (this.closed) throw new SpeakerError('SPEAKER_CLOSED', 'the speaker is closed');
    checkFormat(opts);
    const u = new QueuedUtterance(opts, opts.id ?? `u${++this.seq}`, () => this.vol);
    const frame = 2 * u.channels;
    // Mark handled: a caller that streams and never awaits `done` must not crash the process on a player error.
    u.done.catch(() => undefined);
    this.queue.push(u);
    this.pump();
    return {
      id: u.id,
      write: (pcm) => {
        if (pcm.length % frame !== 0) throw new SpeakerError('SPEAKER_BAD_FORMAT', `PCM of ${pcm.length} bytes is not whole s16le frames of ${u.channels} channel(s)`);
        return u.push(pcm);
      },
      end: () => u.finish(),
      done: u.done,
    };
  }

  async play(pcm: Buffer, opts: PlayOptions): Promise<PlayResult> {
    const frame = 2 * (opts.channels ?? 1);
    if (pcm.length % frame !== 0) throw new SpeakerError('SPEAKER_BAD_FORMAT', `PCM of ${pcm.length} bytes is not whole s16le frames of ${opts.channels ?? 1} channel(s)`);
    const s = this.openStream(opts);
    s.write(pcm);
    s.end();
    return s.done;
  }

  playEarcon(name: EarconName): Promise<PlayResult> {
    const rate = 16000;
    return this.play(generateTones(EARCONS[name], rate), { sampleRate: rate, text: `earcon:${name}` });
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    const u = this.queue.shift()!;
    this.current = u;
    this.emit('start', { id: u.id, text: u.text, at: this.clock.monotonic() });
    this.backend.play(u).then(
      (completed) => this.finishCurrent(u, { id: u.id, completed: completed && !u.aborted }),
      (err: unknown) => {
        const e = err instanceof SpeakerError ? err : new SpeakerError('SPEAKER_PLAYER_FAILED', `player failed: ${String(err)}`, { cause: err });
        if (this.listenerCount('error') > 0) this.emit('error', e);
        this.finishCurrent(u, undefined, e);
      },
    );
  }

  private finishCurrent(u: QueuedUtterance, result?: PlayResult, err?: unknown): void {
    if (this.current === u) this.current = undefined;
    this.emit('end', { id: u.id, completed: result?.completed ?? false, at: this.clock.monotonic() });
    if (result) u.resolve(result);
    else u.reject(err);
    this.pump();
  }

  async stop(): Promise<SpeakerStopReport> {
    const requestedAt = this.clock.monotonic();
    const dropped = this.queue;
    this.queue = [];
    for (const u of dropped) {
      u.abort();
      u.resolve({ id: u.id, completed: false });
    }
    const cur = this.current;
    if (cur) {
      cur.abort();
      await this.backend.abort();
      if (this.current === cur) this.current = undefined;
      // Resolve the caller's promise now rather than waiting a tick for backend.play to settle.
      cur.resolve({ id: cur.id, completed: false });
    }
    const exitedAt = this.clock.monotonic();
    const report: SpeakerStopReport = { requestedAt, exitedAt, exitMs: exitedAt - requestedAt, cut: cur !== undefined, dropped: dropped.length };
    this.emit('stopped', report);
    return report;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }
}
