/**
 * One utterance being captured: PCM goes through the endpointer and, once
 * speech started (plus a pre-roll), into the STT session, so decoding runs
 * while the person speaks. Resolves with the endpoint and the STT result.
 */
import { Endpointer, type EndpointerOptions, type EndpointEvent, type EndReason } from './vad.js';
import { ANSWER_INTENTS } from '../intents/fsg.js';
import type { SttEngine, SttPauseOptions, SttResult, SttSession, SttStartOptions } from './stt/types.js';

/** How a capture ended. Positions in ms of audio; `end_at` from the clock, ms. */
export interface CaptureResult {
  reason: EndReason;
  /** Speech start / end in the captured audio, ms; undefined when no speech. */
  speech_start_ms?: number;
  speech_end_ms?: number;
  /** Audio position where the end was decided, ms (after speech_end_ms by the endpointer's silence wait). */
  decided_at_ms?: number;
  /** Clock time when the end was decided (the reference of the pipeline's timings). */
  end_at: number;
  /** Audio captured, ms. */
  audio_ms: number;
  /** The STT outcome; undefined when no speech (the session was aborted). */
  stt?: SttResult;
  /** Set when the STT engine failed. */
  stt_error?: unknown;
  /** Clock time when the transcript was ready. */
  transcript_at?: number;
}

/** Options of Capture. */
export interface CaptureOptions {
  stt: SttEngine;
  language?: string;
  endpointer: EndpointerOptions;
  /** Audio before the detected speech start also sent to STT, ms. */
  prerollMs: number;
  /** Push-to-talk: every sample goes to STT from the start, and release ends the utterance even without VAD speech. */
  pushToTalk?: boolean;
  /**
   * Act on the recogniser's result at the first pause when it is sure
   * (SttResult.early; issue 15 "Grammar-aware endpointing") instead of
   * waiting for the full silence. Default false.
   */
  earlyCommit?: boolean;
  /** The utterance right after one acted on at its pause: decoded with the continuation grammar (SttStartOptions.continuation). */
  continuation?: boolean;
  /** A yes/no question waits for this utterance: decoded with the answer grammar (SttStartOptions.answer). */
  answer?: boolean;
  now: () => number;
}

/** Audio kept after an early commit for the utterance that may follow, at most, ms. */
export const AFTER_EARLY_MAX_MS = 30_000;

/** A capture in progress. */
export class Capture {
  readonly result: Promise<CaptureResult>;
  private resolve!: (r: CaptureResult) => void;
  /** `result` is settled (the first resolve wins). */
  private resolved = false;
  private readonly ep: Endpointer;
  private readonly session: SttSession;
  private preroll: Buffer[] = [];
  private prerollBytes = 0;
  private streaming: boolean;
  private finished = false;
  private audioBytes = 0;
  /** Bumped by every lull, pause (one not after a lull of its gap) and resume: a speculation for an older one is void. */
  private pauseSeq = 0;
  /** The pauseSeq of the last lull: its gap's pause only marks the silence long enough (`held`). */
  private lullSeq = -1;
  /** The current gap's silence reached pause_ms: a sure result may be acted on. */
  private held = false;
  /** The current gap's speculation was sure (SttResult.early). */
  private sure: { seq: number; speechEndMs: number } | undefined;
  private speechStartMs: number | undefined;
  /** Set when the capture ended at a pause on a sure result: audio fed afterwards is kept in `after`. */
  private early = false;
  private after: Buffer[] = [];
  private afterBytes = 0;

  constructor(private readonly o: CaptureOptions) {
    this.result = new Promise((r) => {
      this.resolve = (v) => {
        if (this.resolved) return;
        this.resolved = true;
        r(v);
      };
    });
    this.ep = new Endpointer(o.endpointer);
    const lang = o.language ? { language: o.language } : {};
    this.session = o.answer ? answerOrCommand(o.stt, lang) : startSession(o.stt, { ...lang, ...(o.continuation ? { continuation: true } : {}) });
    this.streaming = o.pushToTalk === true;
  }

  /** True once the end was decided. */
  get done(): boolean {
    return this.finished;
  }

  /** True when this utterance is decoded with the answer grammar (CaptureOptions.answer): a yes/no question waits for it. */
  get answering(): boolean {
    return this.o.answer === true;
  }

  /** True once the endpointer heard speech start in this capture. */
  get speaking(): boolean {
    return this.speechStartMs !== undefined;
  }

  /** True when the capture ended early (at a pause, on a sure result): audio fed since is kept for the next utterance (takeAfter). */
  get endedEarly(): boolean {
    return this.early;
  }

  /** The audio fed after an early end (nothing said is lost), handed over once. */
  takeAfter(): Buffer[] {
    const a = this.after;
    this.after = [];
    this.afterBytes = 0;
    return a;
  }

  /** Feed microphone PCM. */
  feed(pcm: Buffer): void {
    if (this.finished) {
      if (this.early && this.afterBytes < AFTER_EARLY_MAX_MS * 32) {
        this.after.push(Buffer.from(pcm));
        this.afterBytes += pcm.length;
      }
      return;
    }
    this.audioBytes += pcm.length;
    const events = this.ep.push(pcm);
    if (this.streaming) this.session.write(pcm);
    else {
      this.preroll.push(pcm);
      this.prerollBytes += pcm.length;
      const max = Math.max(pcm.length, this.o.prerollMs * 32) + 640 * 10; // pre-roll + the frames VAD needed to decide
      while (this.prerollBytes - (this.preroll[0]?.length ?? 0) >= max) this.prerollBytes -= this.preroll.shift()!.length;
    }
    for (const ev of events) this.onEvent(ev);
  }

  /** End now: push-to-talk released ('forced') or the microphone stream ended ('stream_end'). */
  finish(reason: 'forced' | 'stream_end'): void {
    if (this.finished) return;
    const ev = this.ep.finish(reason);
    if (!ev) return;
    if (ev.type === 'end' && ev.reason === 'no_speech' && this.o.pushToTalk && this.audioBytes >= 300 * 32) {
      // the button says someone spoke even if the VAD heard nothing loud enough
      this.onEvent({ ...ev, reason, speech_start_ms: 0, speech_end_ms: ev.decided_at_ms });
      return;
    }
    this.onEvent(ev);
  }

  /**
   * Drop the utterance (stop, barge-in), also while its final decode runs
   * after the end was decided. Resolves `result` with reason 'forced' and no
   * STT; nothing once the result is out.
   */
  abort(): void {
    if (this.resolved) return;
    this.finished = true;
    this.session.abort();
    this.resolve({ reason: 'forced', end_at: this.o.now(), audio_ms: this.audioBytes / 32 });
  }

  private onEvent(ev: EndpointEvent): void {
    if (ev.type === 'speech_start') {
      this.speechStartMs ??= ev.at_ms;
      if (!this.streaming) {
        this.streaming = true;
        for (const p of this.preroll) this.session.write(p);
        this.preroll = [];
        this.prerollBytes = 0;
      }
      return;
    }
    if (ev.type === 'lull' || ev.type === 'pause' || ev.type === 'resume') {
      if (this.finished || !this.streaming) return;
      if (ev.type === 'resume') {
        ++this.pauseSeq;
        this.held = false;
        this.session.resume?.();
        return;
      }
      // The pause after a lull of the same gap: the pass runs already; the silence is now long enough to act.
      if (ev.type === 'pause' && this.lullSeq === this.pauseSeq) {
        if (this.session.paddingHeld?.() !== false) {
          this.held = true;
          this.commitIfSure();
          return;
        }
        // The lull's pass decoded padding where a quiet end of a word went on: void it, and pass again on the real audio.
        this.session.resume?.();
      }
      const seq = ++this.pauseSeq;
      if (ev.type === 'lull') {
        // The final pass starts now, on the audio so far with its silence drawn out to the pause's (SttPauseOptions).
        this.lullSeq = seq;
        const silenceMs = ev.decided_at_ms - ev.speech_end_ms;
        this.session.pause?.({ silenceMs, padToMs: silenceMs + this.ep.pauseMs - this.ep.speculateMs });
      } else {
        this.held = true;
        this.session.pause?.();
      }
      if (this.o.earlyCommit && !this.o.pushToTalk && this.session.speculation) {
        void this.session.speculation().then((r) => {
          if (r?.early && !this.finished && seq === this.pauseSeq) {
            this.sure = { seq, speechEndMs: ev.speech_end_ms };
            this.commitIfSure();
          }
        });
      }
      return;
    }
    if (this.finished) return;
    this.finished = true;
    const endAt = this.o.now();
    const base = { reason: ev.reason, end_at: endAt, audio_ms: this.audioBytes / 32 };
    if (ev.reason === 'no_speech' || ev.speech_start_ms === undefined) {
      this.session.abort();
      this.resolve(base);
      return;
    }
    const speech = { ...base, speech_start_ms: ev.speech_start_ms, speech_end_ms: ev.speech_end_ms, decided_at_ms: ev.decided_at_ms };
    // A push-to-talk release ends the utterance on purpose: its audio may stop right after the last word.
    this.session.end(ev.reason === 'forced' ? { endedByPerson: true } : undefined).then(
      (stt) => this.resolve({ ...speech, stt, transcript_at: this.o.now() }),
      (err: unknown) => this.resolve({ ...speech, stt_error: err, transcript_at: this.o.now() }),
    );
  }

  /** Act on the current gap's sure speculation once its silence reached pause_ms (a lull's pass may be sure before). */
  private commitIfSure(): void {
    if (this.held && this.sure?.seq === this.pauseSeq && !this.finished) this.commitEarly(this.sure.speechEndMs);
  }

  /**
   * End at the pause: the recogniser was sure of a complete command (issue
   * 15). end() takes the speculative result without more audio; what is fed
   * from now on is kept for the next utterance (takeAfter).
   */
  private commitEarly(speechEndMs: number): void {
    this.finished = true;
    this.early = true;
    const endAt = this.o.now();
    const decided = this.audioBytes / 32;
    const speech = { reason: 'early' as const, end_at: endAt, audio_ms: decided, speech_start_ms: this.speechStartMs ?? 0, speech_end_ms: speechEndMs, decided_at_ms: decided };
    this.session.end().then(
      (stt) => this.resolve({ ...speech, stt, transcript_at: this.o.now() }),
      (err: unknown) => this.resolve({ ...speech, stt_error: err, transcript_at: this.o.now() }),
    );
  }
}

/**
 * The session of an utterance while a yes/no question waits for it
 * (CaptureOptions.answer): decoded with the answer grammar
 * (SttStartOptions.answer) and, side by side on the same audio, with the
 * command grammar. When the answer grammar hears no answer (rejected), what
 * the command grammar heard is the result only when it changes nothing
 * (changesNothing: "timer status", "what time is it"); the home plugin then
 * drops the question, as for any other input. Otherwise the result is the
 * answer grammar's rejection, and the box asks for a yes or no again. A
 * command that acts is never taken here: tried so, a tester's "hold on" and
 * "no I said no" became "turn mood on" and "lower garage door" and acted, and
 * the e2e test's "get" was heard as "next". The answer grammar decides first:
 * a yes or no is as strict as without the command decode, and when it is
 * heard the command decode is dropped. Before, the real recordings' "timer
 * status" after "Do you really want to turn on ...?" was "Sorry, I didn't
 * catch that. Please say yes or no." (test/bench/voice.ts).
 *
 * pause/resume reach both decodes, so a question that changes nothing is
 * acted on at the pause like any command (speculation: the answer's sure
 * result, or, when the answer grammar rejected the pass, the command
 * grammar's sure result that changes nothing). Decoding both only after the
 * full silence made such a question the slowest utterance of the real
 * recordings (about 820 ms after the last sound, against 300-600 ms).
 */
export function answerOrCommand(stt: SttEngine, opts: SttStartOptions): SttSession {
  const answer = startSession(stt, { ...opts, answer: true });
  const command = startSession(stt, opts);
  let aborted = false;
  /** Whether the command grammar's result may stand for the answer grammar's rejection `heard`. */
  const mayAnswer = (said: SttResult | undefined): said is SttResult => !!said && !said.rejected && !aborted && changesNothing(said);
  return {
    write(pcm) {
      answer.write(pcm);
      command.write(pcm);
    },
    async end(endOpts) {
      const heard = await answer.end(endOpts).catch((err: unknown) => {
        command.abort();
        throw err;
      });
      if (!heard.rejected || aborted) {
        command.abort();
        return heard;
      }
      const said = await command.end(endOpts).catch(() => undefined);
      if (!mayAnswer(said)) return heard;
      return { ...said, finish_ms: Math.max(heard.finish_ms ?? 0, said.finish_ms ?? 0) };
    },
    abort() {
      aborted = true;
      answer.abort();
      command.abort();
    },
    pause(p?: SttPauseOptions) {
      answer.pause?.(p);
      command.pause?.(p);
    },
    resume() {
      answer.resume?.();
      command.resume?.();
    },
    async speculation() {
      const heard = await answer.speculation?.();
      if (!heard?.rejected) return heard;
      const said = await command.speculation?.();
      return mayAnswer(said) ? said : { ...heard, early: false };
    },
    paddingHeld() {
      return answer.paddingHeld?.() !== false && command.paddingHeld?.() !== false;
    },
  };
}

/**
 * Whether `r` holds intents and every one only answers (src/intents/fsg.ts
 * ANSWER_INTENTS: states, temperature, time, weather, timers' status, lists,
 * "never mind"); not TimerChoice, the answer to "which timer?", which may
 * cancel one, nor TimerDuration, the answer to "For how long?", which starts one.
 */
function changesNothing(r: SttResult): boolean {
  const intents = r.intents ?? (r.intent ? [r.intent] : []);
  return intents.length > 0 && intents.every((m) => ANSWER_INTENTS.has(m.intent) && m.intent !== 'TimerChoice' && m.intent !== 'TimerDuration');
}

/** Start an STT session; an engine that throws in start() becomes a session whose end() rejects (never silence). */
function startSession(stt: SttEngine, opts: SttStartOptions): SttSession {
  try {
    return stt.start(opts);
  } catch (err) {
    return {
      write: () => undefined,
      end: () => Promise.reject(err instanceof Error ? err : new Error(String(err))),
      abort: () => undefined,
    };
  }
}
