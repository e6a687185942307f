/**
 * Fakes for the pipeline tests: a microphone that plays queued PCM over a
 * background of quiet noise, a speaker that records what it was given (and
 * can hold playback until told), a TTS whose PCM is the UTF-8 of the text
 * (so the speaker can tell what it says), and an STT engine driven by a
 * function of the audio it received.
 */
import { Readable } from 'node:stream';
import type { Microphone } from '../../src/voice/pipeline.js';
import type { Speaker } from '../../src/voice/speech-queue.js';
import type { TtsAudio, TtsEngine, TtsOptions } from '../../src/voice/tts/types.js';
import type { SttEngine, SttResult, SttSession, SttStartOptions } from '../../src/voice/stt/types.js';
import { VoiceAbortError } from '../../src/voice/errors.js';
import { SttAbortedError } from '../../src/voice/stt/errors.js';
import { noise } from './helpers.js';

/** A microphone: 20 ms chunks, queued utterances first (fast), else background noise at -60 dBFS (real-time pace). */
export class FakeMic implements Microphone {
  starts = 0;
  stops = 0;
  private stream: Readable | undefined;
  private queue: Array<{ pcm: Buffer; done: () => void }> = [];
  private offset = 0;
  private readonly bg = noise(1000, -60, 99);
  private bgOff = 0;
  private immediate: NodeJS.Immediate | undefined;
  private timeout: NodeJS.Timeout | undefined;

  get running(): boolean {
    return this.stream !== undefined;
  }

  /** Queue PCM to be "spoken"; resolves when all of it was emitted. */
  say(pcm: Buffer): Promise<void> {
    return new Promise((done) => this.queue.push({ pcm, done }));
  }

  start(): Readable {
    this.starts++;
    const stream = new Readable({ read: () => undefined });
    this.stream = stream;
    // queued speech flows as fast as the pipeline takes it; background noise at the pace of real time,
    // so "nobody says anything for N ms" takes N ms and a test can speak in between
    const tick = (): void => {
      if (this.stream !== stream) return;
      const speaking = this.queue.length > 0;
      stream.push(this.next());
      if (speaking) this.immediate = setImmediate(tick);
      else this.timeout = setTimeout(tick, 20);
    };
    this.immediate = setImmediate(tick);
    return stream;
  }

  stop(): void {
    this.stops++;
    // (clearImmediate on a Timeout object corrupts Node's immediate queue: keep them apart)
    clearImmediate(this.immediate);
    clearTimeout(this.timeout);
    const s = this.stream;
    this.stream = undefined;
    s?.push(null);
    // what is "said" while nobody listens is lost
    for (const q of this.queue.splice(0)) q.done();
    this.offset = 0;
  }

  private next(): Buffer {
    const head = this.queue[0];
    if (head) {
      const c = head.pcm.subarray(this.offset, this.offset + 640);
      this.offset += 640;
      if (this.offset >= head.pcm.length) {
        this.queue.shift();
        this.offset = 0;
        head.done();
      }
      if (c.length === 640) return c;
      return Buffer.concat([c, Buffer.alloc(640 - c.length)]);
    }
    const c = this.bg.subarray(this.bgOff, this.bgOff + 640);
    this.bgOff = (this.bgOff + 640) % this.bg.length;
    return c;
  }
}

/** One play() call. */
export interface Played {
  text: string;
  sampleRate: number;
  bytes: number;
  /** undefined while playing. */
  completed?: boolean;
}

/** A speaker that records; with `hold`, playback lasts until finishNext()/stop(). */
export class FakeSpeaker implements Speaker {
  readonly played: Played[] = [];
  stops = 0;
  hold = false;
  private pending: Array<{ p: Played; resolve: (r: { completed: boolean }) => void }> = [];
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  /** Called on every play with the record (tests log order). */
  onPlay?: (p: Played) => void;

  play(pcm: Buffer, opts: { sampleRate: number }): Promise<{ completed: boolean }> {
    const p: Played = { text: FakeTts.decode(pcm), sampleRate: opts.sampleRate, bytes: pcm.length };
    this.played.push(p);
    this.onPlay?.(p);
    for (const w of this.waiters.filter((w) => this.played.length >= w.n)) w.resolve();
    this.waiters = this.waiters.filter((w) => this.played.length < w.n);
    return new Promise((resolve) => {
      const entry = { p, resolve: (r: { completed: boolean }) => ((p.completed = r.completed), resolve(r)) };
      this.pending.push(entry);
      if (!this.hold) this.drainSoon();
    });
  }

  /** Finish the oldest playing sentence. */
  finishNext(): void {
    this.pending.shift()?.resolve({ completed: true });
  }

  /** Resolves once `n` play() calls happened. */
  waitForPlays(n: number): Promise<void> {
    if (this.played.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  async stop(): Promise<void> {
    this.stops++;
    for (const e of this.pending.splice(0)) e.resolve({ completed: false });
  }

  /** Texts handed over. */
  get texts(): string[] {
    return this.played.map((p) => p.text);
  }

  private drainSoon(): void {
    setTimeout(() => {
      if (!this.hold) this.finishNext();
    }, 1);
  }
}

/** TTS whose PCM is the text's UTF-8 (padded to whole samples); optional gate delays chosen texts. */
export class FakeTts implements TtsEngine {
  readonly name = 'fake';
  readonly calls: Array<{ text: string; language?: string }> = [];
  gate: ((text: string) => Promise<void>) | undefined;
  /** When set, every synthesize() rejects with it (an engine that cannot run). */
  failure: Error | undefined;

  static decode(pcm: Buffer): string {
    return pcm.toString('utf8').replace(/\0+$/, '');
  }

  async synthesize(text: string, opts: TtsOptions = {}): Promise<TtsAudio> {
    if (opts.signal?.aborted) throw new VoiceAbortError('fake tts');
    if (this.failure) throw this.failure;
    this.calls.push(opts.language ? { text, language: opts.language } : { text });
    if (this.gate) {
      const g = this.gate(text);
      await new Promise<void>((resolve, reject) => {
        opts.signal?.addEventListener('abort', () => reject(new VoiceAbortError('fake tts')), { once: true });
        void g.then(resolve);
      });
    }
    const b = Buffer.from(text, 'utf8');
    return { pcm: b.length % 2 ? Buffer.concat([b, Buffer.alloc(1)]) : b, sampleRate: 16000 };
  }
}

/**
 * STT driven by a function of the audio received. Keeps the SttEngine
 * contract (test/voice/contracts/stt.ts): after abort(), end() rejects with
 * STT_ABORTED and writes are ignored; end() returns one promise.
 */
export class FakeStt implements SttEngine {
  readonly name = 'fake';
  readonly utterances: Buffer[] = [];
  /** Each start()'s options, in order. */
  readonly starts: Array<SttStartOptions | undefined> = [];
  aborted = 0;
  /** `respond` gets the audio, its language and the start()'s options (opts.answer: the answer grammar). */
  constructor(private readonly respond: (pcm: Buffer, language?: string, opts?: SttStartOptions) => SttResult | Promise<SttResult>) {}
  start(opts?: SttStartOptions): SttSession {
    this.starts.push(opts);
    const parts: Buffer[] = [];
    let dropped = false;
    let ending: Promise<SttResult> | undefined;
    const finish = async (): Promise<SttResult> => {
      if (dropped) throw new SttAbortedError();
      const pcm = Buffer.concat(parts);
      this.utterances.push(pcm);
      const r = await this.respond(pcm, opts?.language, opts);
      if (dropped) throw new SttAbortedError();
      return r;
    };
    return {
      write: (pcm) => {
        if (!dropped && !ending) parts.push(Buffer.from(pcm));
      },
      end: () => (ending ??= finish()),
      abort: () => {
        if (dropped) return;
        dropped = true;
        this.aborted++;
      },
    };
  }
}

/** An accepted STT result. */
export function heard(text: string): SttResult {
  return { text, confidence: 0.9, rejected: false, engine: 'fake' };
}
/** A rejected STT result. */
export function rejected(): SttResult {
  return { text: '', confidence: 0.1, rejected: true, engine: 'fake' };
}
