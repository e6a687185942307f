/**
 * Ordered speech output: sentences are synthesised as soon as they arrive
 * (up to `synthAhead` in parallel) and handed to the speaker strictly in order, so the first
 * sentence plays while later ones are still being written or synthesised.
 * `cut()` (stop button, barge-in) aborts pending syntheses, drops everything
 * queued and stops the speaker mid-sentence.
 */
import type { TtsEngine } from './tts/types.js';
import { VoiceAbortError } from './errors.js';
import { systemClock } from '../kernel/clock.js';
import { HomeAgentError } from '../kernel/errors.js';

/**
 * The speaker as the pipeline needs it (structural; hal/speaker satisfies it).
 * `play` queues PCM (mono s16le at `sampleRate` Hz) behind what is already
 * playing and resolves when it has played ({completed: true}) or was cut by
 * stop() ({completed: false}). `stop` silences at once and drops the queue.
 */
export interface Speaker {
  /** Play one sentence's audio; `text` is the sentence (for recorders, such as `homeagent listen`'s). */
  play(pcm: Buffer, opts: { sampleRate: number; text?: string }): Promise<{ completed: boolean }>;
  stop(): Promise<void>;
}

/** Options of SpeechQueue. */
export interface SpeechQueueOptions {
  tts: () => TtsEngine;
  speaker: Speaker;
  /** Called each time a sentence's audio is handed to the speaker; `at` from `now`, ms. */
  onHandover?: (info: { text: string; at: number; samples: number; sampleRate: number }) => void;
  /**
   * Called when the queue has just become idle: everything queued so far has
   * played, been cut or failed (once per busy period; not between sentences
   * as long as the next one was queued before the previous one finished).
   */
  onIdle?: () => void;
  /** Called when a sentence could not be synthesised (it is skipped). */
  onError?: (err: unknown, text: string) => void;
  now?: () => number;
  /** Sentences synthesised ahead of the one being handed over (default 2). */
  synthAhead?: number;
  /** Longest one sentence's synthesis may take, ms, from its text's length in characters (default synthTimeoutMs). */
  synthTimeoutMs?: (chars: number) => number;
}

/**
 * How long the TTS engine may take for one sentence of `chars` characters
 * before it is stopped and the sentence skipped, ms: 20 s and 100 ms per
 * character (piper on a Pi 4 makes speech at about its own length; a
 * 200-character sentence is some 12 s of speech). A tester's hung piper held
 * `say` and every reply after it for good.
 */
export function synthTimeoutMs(chars: number): number {
  return 20_000 + 100 * chars;
}

/** Per-sentence options. */
export interface SayOptions {
  language?: string;
  voice?: string;
}

/**
 * How one say() ended: its audio was handed to the speaker ('handed'),
 * nothing was played (a stop or barge-in dropped it, or it synthesised to
 * no audio: 'dropped'), or the TTS failed (`failed`: its error, also given
 * to SpeechQueueOptions.onError).
 */
export type SayOutcome = 'handed' | 'dropped' | { failed: unknown };

/** The ordered TTS -> speaker queue. */
export class SpeechQueue {
  private gen = 0;
  private handoverTail: Promise<unknown> = Promise.resolve();
  private readonly plays = new Set<Promise<unknown>>();
  private readonly aborts = new Set<AbortController>();
  private queued = 0;
  private readonly now: () => number;
  private readonly recent: Promise<unknown>[] = [];
  private readonly aheadLimit: number;
  /** Busy since the last onIdle call. */
  private wasBusy = false;

  constructor(private readonly o: SpeechQueueOptions) {
    this.now = o.now ?? (() => systemClock.monotonic());
    this.aheadLimit = Math.max(1, o.synthAhead ?? 2);
  }

  /** Sentences queued or playing (not yet finished). */
  get busy(): boolean {
    return this.queued > 0 || this.plays.size > 0;
  }

  /** Queue one sentence; returns a promise that resolves when it has been handed over, dropped or failed (SayOutcome); it never rejects. */
  say(text: string, opts: SayOptions = {}): Promise<SayOutcome> {
    const gen = this.gen;
    const ac = new AbortController();
    this.aborts.add(ac);
    this.queued++;
    this.wasBusy = true;
    // synthesise at most `aheadLimit` sentences ahead of the one being handed over (a long
    // 'full' reply must not start a dozen TTS processes at once on a Pi)
    const ahead = this.recent.length >= this.aheadLimit ? this.recent[this.recent.length - this.aheadLimit]! : Promise.resolve();
    const synth = ahead.then(async () => {
      if (gen !== this.gen) throw new VoiceAbortError('speech');
      const limit = (this.o.synthTimeoutMs ?? synthTimeoutMs)([...text].length);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          ac.abort();
          reject(new HomeAgentError('TTS_TIMEOUT', `the TTS engine made no speech within ${Math.round(limit / 1000)} s for a sentence of ${[...text].length} characters, so it was stopped`));
        }, limit);
      });
      try {
        return await Promise.race([this.o.tts().synthesize(text, { signal: ac.signal, ...opts }), late]);
      } finally {
        clearTimeout(timer);
      }
    });
    synth.catch(() => undefined);
    const prev = this.handoverTail;
    const mine = (async (): Promise<SayOutcome> => {
      try {
        await prev;
        let audio;
        try {
          audio = await synth;
        } catch (err) {
          if (gen !== this.gen) return 'dropped';
          this.o.onError?.(err, text);
          return { failed: err };
        }
        if (gen !== this.gen || audio.pcm.length === 0) return 'dropped';
        const p = this.o.speaker.play(audio.pcm, { sampleRate: audio.sampleRate, text });
        const tracked = p.then(
          () => undefined,
          (err: unknown) => this.o.onError?.(err, text),
        );
        this.plays.add(tracked);
        void tracked.finally(() => {
          this.plays.delete(tracked);
          this.checkIdle();
        });
        this.o.onHandover?.({ text, at: this.now(), samples: audio.pcm.length / 2, sampleRate: audio.sampleRate });
        return 'handed';
      } finally {
        this.aborts.delete(ac);
        this.queued--;
        this.checkIdle();
      }
    })();
    this.handoverTail = mine;
    this.recent.push(mine);
    if (this.recent.length > this.aheadLimit) this.recent.shift();
    return mine;
  }

  private checkIdle(): void {
    if (!this.wasBusy || this.busy) return;
    this.wasBusy = false;
    this.o.onIdle?.();
  }

  /** Resolves when everything queued so far has played, been cut or failed. */
  async idle(): Promise<void> {
    for (;;) {
      await this.handoverTail;
      if (this.plays.size === 0 && this.queued === 0) return;
      await Promise.all([...this.plays]);
    }
  }

  /** Stop speaking now: abort syntheses, drop the queue, stop the speaker. */
  async cut(): Promise<void> {
    this.gen++;
    for (const ac of this.aborts) ac.abort();
    this.aborts.clear();
    await this.o.speaker.stop();
  }
}
