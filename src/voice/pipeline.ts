/**
 * The voice pipeline plugin: activation (push-to-talk `plugin.gpio.ptt`, a
 * tap of the one button `plugin.voice.listen`, a Wyoming wake word, or the
 * CLI) -> endpointing -> STT (decoding while the
 * person speaks) -> `injectInput('speaker', ...)` -> the `speaker` output
 * channel (Cap.Stream: sentences are synthesised and queued as the model
 * writes) -> the speaker. Never silent: when nothing was recognised it says
 * plugin.voice.message_not_understood. Stop cuts speech mid-sentence; the
 * wake word or the button during a reply cuts it and listens (barge-in);
 * a reply that asks something (tool `expect_reply`, output meta
 * `expects_reply: true`, or a confirmation question with meta
 * `confirmation: true`, answered through the kernel's awaitInput) is
 * followed by listening without the wake word (the state `waiting_for_answer`
 * for a confirmation). `plugin.voice.mute` switches the microphone off and on.
 * Reports what it does as `plugin.voice.activity` facts (captures, speaker,
 * follow-up, mute); the assistant-state plugin turns them into the
 * assistant state (src/voice/state-machine.ts). Exposes per-utterance timings.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../kernel/log-types.js';
import { Cap, type OutputMessage } from '../kernel/output-types.js';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import type { TurnResult } from '../kernel/turn-types.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { systemClock } from '../kernel/clock.js';
import { hasHan } from '../kernel/language.js';
import type { VoiceActivity } from '../kernel/assistant-state.js';
import type { SttEngine, SttResult } from './stt/types.js';
import { NUMBER_RIVALS } from './stt/pocketsphinx-judge.js';
import type { TtsEngine } from './tts/types.js';
import type { WakeDetection, WakeWordDetector } from './wyoming/wake-client.js';
import { AudioInput, type Microphone } from './audio-input.js';
import { SpeechQueue, type SayOutcome, type Speaker } from './speech-queue.js';
import { TtsError } from './errors.js';
import { Capture, type CaptureResult } from './capture.js';
import { splitSentences, speakable } from '../kernel/sentences.js';
import { createTtsEngine, createWakeDetector, registerVoiceSettings, voiceSetting } from './settings.js';
import { Endpointer, type EndReason } from './vad.js';
import { EspeakTts } from './tts/espeak.js';

export type { Speaker } from './speech-queue.js';
export type { Microphone } from './audio-input.js';

/** Constructor dependencies of VoicePlugin. */
export interface VoicePluginDeps {
  /** Needed for listening (PTT, wake, listenOnce); feedUtterance works without it. */
  microphone?: Microphone;
  speaker: Speaker;
  /** The STT engine (in the service: the order chain command grammar -> dictation). */
  stt: SttEngine;
  /** TTS engine; default: built from plugin.voice.tts_engine at start(). */
  tts?: TtsEngine;
  /** Wake-word detector; default: WyomingWake when plugin.voice.wyoming_wake_host is set; null: none. */
  wake?: WakeWordDetector | null;
  /** Clock for timings, ms (default the system clock's monotonic time). */
  now?: () => number;
  /** Wait before reconnecting a failed wake session, ms (default 5000). */
  wakeRetryMs?: number;
}

/** What started a listening turn. */
export type Trigger = 'ptt' | 'button' | 'wake' | 'cli' | 'followup' | 'feed' | 'continuation';

/**
 * Timings of one utterance, ms. Reference point: the moment the endpointer
 * decided the utterance ended (`end_of_speech_at`, clock ms).
 */
export interface UtteranceTimings {
  utterance_id: string;
  trigger: Trigger;
  end_reason: EndReason;
  /** Speech length in the audio (speech end - speech start), ms. */
  speech_ms: number;
  end_of_speech_at: number;
  /** Audio the endpointer waited after the last speech before deciding the end (its silence wait), ms. Add it to the figures below for the time from the last spoken sound. */
  endpoint_wait_ms?: number;
  /** End of speech -> transcript ready. */
  transcript_ms?: number;
  /** STT engine's own finish time after end(), when it reports one. */
  stt_finish_ms?: number;
  /** End of speech -> first audio handed to the speaker (reply or "didn't catch that"). */
  first_audio_ms?: number;
}

/** The result of one listening turn. */
export interface UtteranceOutcome {
  utterance_id: string;
  /** injected: a transcript went to the agent; no_speech: nothing heard; rejected: STT rejected / empty; error: STT failed; cancelled: stop or barge-in. */
  status: 'injected' | 'no_speech' | 'rejected' | 'error' | 'cancelled';
  text: string;
  stt?: SttResult;
  error?: string;
  timings: UtteranceTimings;
  /** The agent's turn, when injected. */
  turn?: Promise<TurnResult>;
  /** Resolves when the answer (or the "didn't catch that") has been spoken; timings are then complete. */
  done: Promise<UtteranceTimings>;
  /** What the box said instead of a turn when nothing was taken (rejected, error, no_speech): its "didn't catch that" message. */
  said?: string;
  /**
   * When this utterance was acted on at its first pause (end_reason 'early'):
   * the utterance heard after it (speech that went on, "… and lock the front
   * door"), or no_speech when only silence followed.
   */
  continuation?: Promise<UtteranceOutcome>;
  /**
   * A fed recording (feedUtterance) that went on after the box stopped
   * listening (the utterance ended by its silence, not at a pause it acted
   * on): where that was in the recording, ms, and whether the rest holds
   * speech (the endpointer finds some). It was not listened to: the box hears
   * one utterance per wake, as after a button press.
   */
  unheard?: { from_ms: number; speech: boolean };
}

/**
 * Longest a yes/no question keeps the answer grammar on (VoicePlugin
 * answerOpen), ms: four times plugin.home.confirm_timeout_ms's default (15 s).
 * The question's own end (plugin.home.decision) normally ends it sooner.
 */
export const ANSWER_WINDOW_MS = 60_000;

/** The voice pipeline plugin (name 'voice'). */
export class VoicePlugin implements Plugin {
  readonly name = 'voice';
  private sdk: PluginSDK | undefined;
  private log: Logger | undefined;
  private tts: TtsEngine | undefined;
  private speech: SpeechQueue | undefined;
  private readonly now: () => number;
  private readonly unsubs: Array<() => void> = [];
  private input: AudioInput | undefined;
  private capture: Capture | undefined;
  /** The person speaking in a fed recording's captures (feedUtterance `user`: a browser paired for a person). */
  private readonly speakers = new WeakMap<Capture, string>();
  private captureOutcome: Promise<UtteranceOutcome> | undefined;
  /** Captures fed from a recording (feedUtterance) rather than the microphone. */
  private readonly fed = new WeakSet<Capture>();
  /** Per capture: the outcome of the utterance heard after it, once one starts (an early end; beginContinuation). */
  private readonly continuations = new WeakMap<Capture, { promise: Promise<UtteranceOutcome>; resolve: (o: Promise<UtteranceOutcome>) => void; next?: { capture: Capture; outcome: Promise<UtteranceOutcome> } }>();
  private stopped = true;
  private activeTurns = 0;
  private expectReply = false;
  private replyInput: string | undefined;
  private replyHadSentences = false;
  private readonly ignoredInputs = new Set<string>();
  private dropNewReplies = false;
  private bargedIn = false;
  /** The reply being delivered asks a yes/no confirmation: the follow-up listens for the answer. */
  private expectAnswer = false;
  /**
   * A yes/no confirmation was asked and not yet answered by voice: every
   * utterance until then (the follow-up, a fed file, one after the wake
   * word) is decoded with the answer grammar (SttStartOptions.answer).
   * Cleared by an answer heard, a later reply that asks nothing, the
   * question settled anywhere (plugin.home.decision: answered, timed out,
   * dropped), and stop; and at the latest ANSWER_WINDOW_MS after the
   * question (a question settled where no decision is published must not
   * leave the box deaf to commands).
   */
  private answerOpen = false;
  /** When answerOpen lapses (this.now() time, ms). */
  private answerOpenUntil = 0;
  /** The follow-up listening due after the reply now playing; cleared by stop, barge-in and mute. */
  private followupDue: { answer: boolean } | undefined;
  /** The microphone is switched off (plugin.voice.mute). */
  private muted = false;
  /** Sequence of captures (listen_id of plugin.voice.activity). */
  private listenSeq = 0;
  private captureId: string | undefined;
  private awaitingAudio: { timings: UtteranceTimings; resolve: () => void } | undefined;
  private readonly timingListeners = new Set<(t: UtteranceTimings) => void>();
  /** Timings of the most recent utterance. */
  lastTimings: UtteranceTimings | undefined;

  constructor(private readonly deps: VoicePluginDeps) {
    this.now = deps.now ?? (() => systemClock.monotonic());
  }

  /** True while the microphone is switched off (plugin.voice.mute). */
  get isMuted(): boolean {
    return this.muted;
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    this.log = sdk.log;
    this.stopped = false;
    const settings = sdk.settings();
    registerVoiceSettings(settings);
    this.tts = this.deps.tts ?? this.ttsFromSettings();
    if (!this.deps.tts) {
      this.unsubs.push(
        settings.onChange('plugin.voice.', (key) => {
          if (/tts|piper/.test(key)) this.tts = this.ttsFromSettings();
        }),
      );
    }
    this.speech = new SpeechQueue({
      tts: () => this.tts!,
      speaker: this.deps.speaker,
      now: this.now,
      onHandover: () => this.onHandover(),
      onIdle: () => this.report({ event: 'speech_end' }),
      onError: (err, text) => this.log?.warn({ err: errorMessage(err), text }, 'voice: could not speak a sentence'),
    });
    sdk.registerOutputChannel('speaker', Cap.Text | Cap.Audio | Cap.Stream, 'The loudspeaker of the voice box: text is spoken aloud, sentence by sentence.', (msg) => this.onOutput(msg), {
      help: 'Speak text through the loudspeaker. Keep it short and plain: no markdown, lists or links. Set meta.expects_reply=true (or call expect_reply) when you ask the user something.',
      types: ['text'],
    });
    sdk.registerTool({
      name: 'expect_reply',
      description: 'Call when your spoken reply asks a question: the box then listens for the answer without the wake word. Example: {}',
      group: 'voice',
      channel: 'speaker',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_args, ctx) => {
        if (ctx.input.channel !== 'speaker') return 'not a voice conversation; nothing to do';
        this.expectReply = true;
        return 'ok: the box will listen for the answer after your reply';
      },
    });
    this.unsubs.push(sdk.subscribe('stop', () => void this.onStop()));
    this.unsubs.push(
      sdk.subscribe('plugin.gpio.ptt', (p) => {
        if (p.pressed === true) {
          if (this.muted) this.log?.info({}, 'voice: muted; the push-to-talk button is ignored');
          else void this.activate('ptt').catch((err: unknown) => this.log?.warn({ err: errorMessage(err) }, 'voice: could not start listening'));
        } else if (p.pressed === false) this.capture?.finish('forced');
      }),
      sdk.subscribe('plugin.voice.mute', (p) => void this.setMuted(typeof p.muted === 'boolean' ? p.muted : !this.muted)),
      sdk.subscribe('plugin.voice.listen', (p) => this.onListenRequest(p.action, p.source)),
      // A risky action's question settled (answered anywhere, timed out, dropped): commands are heard again.
      sdk.subscribe('plugin.home.decision', () => {
        this.answerOpen = false;
        // Listening for that answer with nothing said yet: the listening ends (a newcomer's box stayed in
        // waiting_for_answer after the question timed out, while the simulated microphone sent no audio to end it).
        const c = this.capture;
        if (c && !c.done && c.answering && !c.speaking && !this.fed.has(c)) c.abort();
      }),
    );
    const wake = this.deps.wake === null ? undefined : (this.deps.wake ?? createWakeDetector(settings));
    this.input = new AudioInput({
      ...(this.deps.microphone ? { microphone: this.deps.microphone } : {}),
      ...(wake ? { wake } : {}),
      ...(this.deps.wakeRetryMs !== undefined ? { wakeRetryMs: this.deps.wakeRetryMs } : {}),
      log: sdk.log,
      onWake: (d) => this.onWake(d),
      // The microphone's stream ended: it ends the capture it feeds, never a recording being fed.
      onEnd: () => {
        if (this.capture && !this.fed.has(this.capture)) this.capture.finish('stream_end');
      },
    });
    this.input.sink = (pcm) => {
      // A recording being fed (homeagent listen) is the only audio of its capture: the microphone's is not mixed in.
      if (!this.capture || this.capture.done || this.fed.has(this.capture)) return false;
      this.capture.feed(pcm);
      return true;
    };
    await this.input.startWake();
  }

  /** The configured TTS engine; espeak-ng when the configuration is unusable (never silent). */
  private ttsFromSettings(): TtsEngine {
    try {
      return createTtsEngine(this.sdk!.settings());
    } catch (err) {
      this.log?.warn({ err: errorMessage(err) }, 'voice: TTS settings invalid; using espeak-ng');
      return new EspeakTts();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubs.splice(0)) u();
    this.capture?.abort();
    if (this.captureId !== undefined) this.report({ event: 'listen_end', listen_id: this.captureId, next: 'nothing' });
    await this.speech?.cut();
    await this.input?.close();
    this.releaseAudioWaiter();
  }

  /** Subscribe to completed utterance timings (fires when the first audio was handed over, or the turn ended without audio). */
  onTimings(listener: (t: UtteranceTimings) => void): () => void {
    this.timingListeners.add(listener);
    return () => this.timingListeners.delete(listener);
  }

  /**
   * Listen once through the microphone (the CLI `listen` command), as if the
   * button was pressed but ended by the endpointer.
   * @throws Error when there is no microphone or the plugin is not started.
   */
  listenOnce(): Promise<UtteranceOutcome> {
    return this.activate('cli');
  }

  /**
   * Switch the microphone off (`muted`) or on. Muted: the capture in
   * progress is dropped, the microphone is closed (no wake word, button or
   * follow-up listens); replies and messages are still spoken. Recordings
   * fed with feedUtterance (`homeagent listen`) still work.
   */
  async setMuted(muted: boolean): Promise<void> {
    if (this.stopped || muted === this.muted) return;
    this.muted = muted;
    this.log?.info({ muted }, muted ? 'voice: microphone off' : 'voice: microphone on');
    this.report({ event: muted ? 'mute' : 'unmute' });
    if (muted) {
      this.expectReply = false;
      this.followupDue = undefined;
      this.capture?.abort();
      await this.input?.release(true);
    } else {
      await this.input?.startWake();
    }
  }

  /**
   * Run one recorded utterance (16 kHz mono s16le) through endpointing, STT
   * and the agent, as if spoken into the microphone. Audio is fed in 20 ms
   * chunks; when it runs out before the endpointer decided, the end of the
   * buffer ends the utterance. `user`: the person speaking (a browser paired
   * for a person), carried into the turn's input as typed input carries it.
   */
  async feedUtterance(pcm: Buffer, opts: { chunkMs?: number; realtime?: boolean; user?: string } = {}): Promise<UtteranceOutcome> {
    const { capture, outcome } = this.beginCapture('feed', {});
    this.fed.add(capture);
    if (opts.user) this.speakers.set(capture, opts.user);
    const chunkMs = opts.chunkMs ?? 20;
    const step = Math.max(2, Math.round(chunkMs * 32));
    const t0 = systemClock.monotonic();
    let cur = capture;
    let unheardFrom: number | undefined;
    for (let o = 0, i = 0; o < pcm.length; o += step, i++) {
      // Real-time pace: a chunk every chunkMs, as a microphone delivers it (decoding then runs while "speaking").
      if (opts.realtime) {
        const due = t0 + i * chunkMs - systemClock.monotonic();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
      } else await new Promise((r) => setImmediate(r)); // what the recogniser finished meanwhile (a pause's result) is seen between chunks
      if (cur.done && !cur.endedEarly) {
        unheardFrom = o;
        break;
      }
      // Acted on at a pause: the rest of the recording is the next utterance (nothing said is lost).
      if (cur.done && !this.stopped) {
        cur = this.beginContinuation(cur)?.capture ?? cur;
        if (opts.user) this.speakers.set(cur, opts.user);
      }
      cur.feed(pcm.subarray(o, o + step));
    }
    cur.finish('stream_end');
    if (unheardFrom === undefined) return outcome;
    const unheard = { from_ms: Math.round(unheardFrom / 32), speech: holdsSpeech(pcm.subarray(unheardFrom)) };
    return outcome.then((o) => ({ ...o, unheard }));
  }

  /**
   * Start the utterance after one acted on at its first pause (issue 15):
   * fed what the early capture kept since, listening no longer than the
   * silence that would have ended the first one plus
   * plugin.voice.pause_ms; only silence is "nothing" (no "didn't catch that").
   * Started once per early capture, by whichever comes first: a fed
   * recording's next chunk or the capture's own result (afterCapture); the
   * other gets the same one, so the rest of a recording always reaches it
   * (when the result came first, the chunks went on to the ended capture
   * and the continuation, fed nothing more, never ended).
   */
  private beginContinuation(prev: Capture): { capture: Capture; outcome: Promise<UtteranceOutcome> } | undefined {
    const link = this.continuations.get(prev);
    if (!link || link.next) return link?.next;
    const s = this.sdk!.settings();
    const wait = voiceSetting<number>(s, 'silence_ms') + voiceSetting<number>(s, 'pause_ms');
    const next = this.beginCapture('continuation', { noSpeechTimeoutMs: wait });
    link.next = next;
    if (this.fed.has(prev)) this.fed.add(next.capture);
    for (const pcm of prev.takeAfter()) next.capture.feed(pcm);
    link.resolve(next.outcome);
    return next;
  }

  /** Start listening (PTT press, wake word, CLI); during a reply this is barge-in. */
  private async activate(trigger: Trigger, noSpeechTimeoutMs?: number, answer = false): Promise<UtteranceOutcome> {
    if (this.stopped || !this.sdk) throw new Error('voice plugin is not started');
    if (this.captureOutcome && this.capture && !this.capture.done) return this.captureOutcome;
    if (!this.deps.microphone) throw new Error('voice: no microphone configured');
    if (this.muted) throw new Error('voice: the microphone is muted (plugin.voice.mute)');
    if (trigger !== 'followup' && (this.speech?.busy || this.activeTurns > 0)) await this.bargeIn();
    await this.input?.open();
    if (this.muted) {
      // muted while the microphone opened: it stays off
      await this.input?.release(true);
      throw new Error('voice: the microphone is muted (plugin.voice.mute)');
    }
    // Something else started listening while the microphone opened (a recording fed by `homeagent listen`, the
    // button): that capture goes on; a follow-up never drops it.
    if (this.captureOutcome && this.capture && !this.capture.done) {
      void this.input?.release();
      return this.captureOutcome;
    }
    const { outcome } = this.beginCapture(trigger, { ...(noSpeechTimeoutMs !== undefined ? { noSpeechTimeoutMs } : {}), answer });
    return outcome;
  }

  private async bargeIn(): Promise<void> {
    this.log?.info({}, 'voice: barge-in, cutting the reply');
    if (this.replyInput) this.ignoredInputs.add(this.replyInput);
    else if (this.activeTurns > 0) this.dropNewReplies = true;
    this.expectReply = false;
    this.expectAnswer = false;
    this.followupDue = undefined;
    this.bargedIn = true;
    await this.speech?.cut();
  }

  private beginCapture(trigger: Trigger, overrides: { noSpeechTimeoutMs?: number; answer?: boolean }): { capture: Capture; outcome: Promise<UtteranceOutcome> } {
    const sdk = this.sdk;
    if (!sdk || this.stopped) throw new Error('voice plugin is not started');
    // A capture that ended early is only fetching its decided result: the next utterance does not drop it.
    if (!this.capture?.endedEarly) this.capture?.abort();
    const s = sdk.settings();
    const capture = new Capture({
      stt: this.deps.stt,
      language: voiceSetting<string>(s, 'language'),
      prerollMs: voiceSetting<number>(s, 'preroll_ms'),
      pushToTalk: trigger === 'ptt',
      earlyCommit: voiceSetting<boolean>(s, 'early_commit'),
      continuation: trigger === 'continuation',
      answer: trigger !== 'continuation' && (overrides.answer === true || (this.answerOpen && this.now() < this.answerOpenUntil)),
      now: this.now,
      endpointer: {
        silenceMs: voiceSetting<number>(s, 'silence_ms'),
        pauseMs: voiceSetting<number>(s, 'pause_ms'),
        speculateMs: voiceSetting<number>(s, 'speculate_ms'),
        maxUtteranceMs: voiceSetting<number>(s, 'max_utterance_ms'),
        noSpeechTimeoutMs: overrides.noSpeechTimeoutMs ?? voiceSetting<number>(s, 'no_speech_timeout_ms'),
        thresholdDb: voiceSetting<number>(s, 'vad_threshold_db'),
        minEnergyDb: voiceSetting<number>(s, 'vad_min_energy_db'),
      },
    });
    this.capture = capture;
    let resolveNext!: (o: Promise<UtteranceOutcome>) => void;
    const nextPromise = new Promise<UtteranceOutcome>((r) => (resolveNext = r));
    this.continuations.set(capture, { promise: nextPromise, resolve: resolveNext });
    const listenId = String(++this.listenSeq);
    this.captureId = listenId;
    this.report({ event: 'listen_start', listen_id: listenId, answer: overrides.answer === true });
    const outcome = capture.result.then((r) => this.afterCapture(trigger, capture, r, listenId));
    this.captureOutcome = outcome;
    return { capture, outcome };
  }

  private async afterCapture(trigger: Trigger, capture: Capture, r: CaptureResult, listenId: string): Promise<UtteranceOutcome> {
    if (this.capture === capture) this.capture = undefined;
    if (this.captureId === listenId) this.captureId = undefined;
    const ended = (next: 'turn' | 'message' | 'nothing') => this.report({ event: 'listen_end', listen_id: listenId, next });
    // Acted on at a pause: keep listening at once for what may follow (a fed recording starts it itself).
    const early = r.reason === 'early' && !this.stopped;
    if (early && trigger !== 'feed') this.beginContinuation(capture);
    else if (!early) void this.input?.release();
    const continuation = early ? this.continuations.get(capture)?.promise : undefined;
    const utterance_id = randomUUID();
    const timings: UtteranceTimings = {
      utterance_id,
      trigger,
      end_reason: r.reason,
      speech_ms: r.speech_start_ms !== undefined && r.speech_end_ms !== undefined ? r.speech_end_ms - r.speech_start_ms : 0,
      end_of_speech_at: r.end_at,
    };
    if (r.decided_at_ms !== undefined && r.speech_end_ms !== undefined) timings.endpoint_wait_ms = Math.max(0, r.decided_at_ms - r.speech_end_ms);
    if (r.transcript_at !== undefined) timings.transcript_ms = r.transcript_at - r.end_at;
    if (r.stt?.finish_ms !== undefined) timings.stt_finish_ms = r.stt.finish_ms;
    this.lastTimings = timings;
    const base = { utterance_id, timings, ...(continuation ? { continuation } : {}) };

    if (this.stopped || (r.reason === 'forced' && r.stt === undefined && r.stt_error === undefined)) {
      ended('nothing');
      return { ...base, status: 'cancelled', text: '', done: Promise.resolve(timings) };
    }
    if (r.stt_error !== undefined || !r.stt || r.stt.rejected || r.stt.text.trim() === '') {
      const status = r.stt_error !== undefined ? 'error' : r.stt ? 'rejected' : 'no_speech';
      if (status === 'no_speech' && (trigger === 'followup' || trigger === 'continuation')) {
        ended('nothing');
        return { ...base, status, text: '', done: Promise.resolve(timings) };
      }
      ended('message');
      if (r.stt_error !== undefined) {
        this.log?.warn({ err: errorMessage(r.stt_error) }, 'voice: speech recognition failed');
        this.report({ event: 'failure', message: errorMessage(r.stt_error) });
      }
      // Not a yes or no while a question waits for one: say so, and listen for the answer again.
      const reAsk = status !== 'error' && capture.answering && this.answerOpen && this.now() < this.answerOpenUntil;
      const said = reAsk ? this.notUnderstoodAnswerMessage() : this.notUnderstoodMessage(r.stt?.unsure_between);
      if (status === 'rejected' && r.stt) {
        const s = r.stt;
        this.sdk?.publish('plugin.voice.not_understood', { ...(s.heard ? { heard: s.heard } : {}), ...(s.reason ? { reason: s.reason } : {}), ...(s.unsure_between ? { unsure_between: s.unsure_between } : {}), said, answering: capture.answering });
      }
      const done = this.sayNotUnderstood(timings, said);
      if (reAsk) {
        this.expectReply = true;
        this.expectAnswer = true;
        void this.afterReply();
      }
      const out: UtteranceOutcome = { ...base, status, text: '', done, said };
      if (r.stt) out.stt = r.stt;
      if (r.stt_error !== undefined) out.error = errorMessage(r.stt_error);
      return out;
    }

    const stt = r.stt;
    const sdk = this.sdk!;
    ended('turn');
    this.answerOpen = false;
    const done = this.waitFirstAudio(timings);
    const meta = {
      utterance_id,
      stt: { engine: stt.engine, confidence: stt.confidence, ...(stt.intent ? { intent: stt.intent } : {}), ...(stt.intents ? { intents: stt.intents } : {}), ...(stt.finish_ms !== undefined ? { finish_ms: stt.finish_ms } : {}) },
      trigger,
    };
    const barge = this.bargedIn && this.activeTurns > 0;
    this.bargedIn = false;
    this.activeTurns++;
    this.dropNewReplies = false;
    // Who is speaking, when the audio came from a browser paired for a person (feedUtterance `user`).
    const user = this.speakers.get(capture);
    const opts = { meta, ...(user ? { user } : {}) };
    const turn = barge ? sdk.injectInterrupt(1, 'speaker', stt.text, opts) : sdk.injectInput('speaker', stt.text, opts);
    const settled = turn.then(
      (res) => res,
      (err: unknown): TurnResult => {
        this.log?.warn({ err: errorMessage(err) }, 'voice: the agent turn failed');
        return { input_id: '', reply: '', status: 'error', tools: [], error: errorMessage(err) };
      },
    );
    void settled.then(async (res) => {
      this.activeTurns--;
      if (this.activeTurns === 0) this.dropNewReplies = false;
      if (res.status === 'error' && !this.replyHadSentences && this.awaitingAudio?.timings === timings) {
        await this.sayNotUnderstood(timings);
      }
      this.report({ event: 'input_done', listen_id: listenId });
      await this.speech?.idle();
      if (this.awaitingAudio?.timings === timings) this.releaseAudioWaiter();
    });
    const full = Promise.all([done, settled.then(() => this.speech?.idle())]).then(() => timings);
    return { ...base, status: 'injected', text: stt.text, stt, turn: settled, done: full };
  }

  /**
   * The "didn't catch that" message in the configured language. `unsure`
   * (SttResult.unsure_between, English engines): the two words the recogniser
   * could not tell apart, said instead ("Sorry, I didn't catch whether to lock
   * or unlock. Please say it again.").
   */
  private notUnderstoodMessage(unsure?: [string, string]): string {
    const s = this.sdk!.settings();
    if (/^(zh|cmn)/i.test(voiceSetting<string>(s, 'language'))) return voiceSetting<string>(s, 'message_not_understood_zh');
    // A number and its rival (pocketsphinx-judge.ts NUMBER_RIVALS) are no verbs: "whether you said thirteen or thirty".
    if (unsure && NUMBER_RIVALS[unsure[0]] !== undefined) return `Sorry, I didn't catch whether you said ${unsure[0]} or ${unsure[1]}. Please say it again.`;
    if (unsure) return `Sorry, I didn't catch whether to ${unsure[0]} or ${unsure[1]}. Please say it again.`;
    return voiceSetting<string>(s, 'message_not_understood');
  }

  /**
   * What the box says when a yes/no question waits and what it heard was
   * neither (the answer grammar rejected it): the "didn't catch that" message
   * and a reminder of the answer it waits for (src/intents/answers.ts).
   */
  private notUnderstoodAnswerMessage(): string {
    const s = this.sdk!.settings();
    if (/^(zh|cmn)/i.test(voiceSetting<string>(s, 'language'))) return `${voiceSetting<string>(s, 'message_not_understood_zh')}请说是或者不是。`;
    return `${voiceSetting<string>(s, 'message_not_understood')} Please say yes or no.`;
  }

  /** Speak `msg` (default notUnderstoodMessage()) in the configured language; resolves when spoken. */
  private async sayNotUnderstood(timings: UtteranceTimings, msg = this.notUnderstoodMessage()): Promise<UtteranceTimings> {
    const lang = voiceSetting<string>(this.sdk!.settings(), 'language');
    const zh = /^(zh|cmn)/i.test(lang);
    const first = this.waitFirstAudio(timings);
    void this.speech!.say(msg, { language: zh ? 'zh' : lang });
    await this.speech!.idle();
    this.releaseAudioWaiter();
    await first;
    return timings;
  }

  private waitFirstAudio(timings: UtteranceTimings): Promise<void> {
    this.releaseAudioWaiter();
    return new Promise<void>((resolve) => {
      this.awaitingAudio = { timings, resolve };
    });
  }

  private releaseAudioWaiter(): void {
    const w = this.awaitingAudio;
    this.awaitingAudio = undefined;
    if (w) {
      for (const l of this.timingListeners) l(w.timings);
      w.resolve();
    }
  }

  private onHandover(): void {
    this.report({ event: 'speech_start' });
    const w = this.awaitingAudio;
    if (w) {
      w.timings.first_audio_ms = this.now() - w.timings.end_of_speech_at;
      this.releaseAudioWaiter();
    }
  }

  /** The `speaker` output channel handler. */
  private async onOutput(msg: OutputMessage): Promise<void> {
    // meta.await_spoken (the CLI's `say`): the sender learns whether the text was spoken, not only that it was sent.
    const awaitSpoken = msg.meta.await_spoken === true;
    if (this.stopped || !this.speech) {
      if (awaitSpoken) throw new HomeAgentError('VOICE_STOPPED', 'the voice plugin is not running, so nothing was spoken');
      return;
    }
    const id = msg.input_id;
    if (id && this.ignoredInputs.has(id)) {
      if (msg.kind !== 'sentence') this.ignoredInputs.delete(id);
      return;
    }
    if (id && this.dropNewReplies && id !== this.replyInput) {
      this.ignoredInputs.add(id);
      return;
    }
    // the model flags a question (expects_reply); a confirmation (home plugin, meta.confirmation) waits for yes/no
    if (msg.meta.expects_reply === true || msg.meta.confirmation === true) this.expectReply = true;
    // The answer grammar stays on until the question is settled (plugin.home.decision), answered here, or
    // ANSWER_WINDOW_MS: not when the box says something else meanwhile. A newcomer's timer rang while "Do you really
    // want to unlock the Front Door?" waited, and the spoken "yes" after it was decoded as a command and refused.
    if (msg.meta.confirmation === true) {
      this.expectAnswer = true;
      this.answerOpen = true;
      this.answerOpenUntil = this.now() + ANSWER_WINDOW_MS;
    }
    const lang = voiceSetting<string>(this.sdk!.settings(), 'language');
    if (msg.kind === 'sentence') {
      this.replyInput = id;
      this.replyHadSentences = true;
      this.queueText(msg.content, lang);
      return;
    }
    if (msg.interrupted) {
      this.endReply();
      this.expectReply = false;
      this.expectAnswer = false;
      void this.afterReply();
      return;
    }
    const said: Array<Promise<SayOutcome>> = [];
    if (msg.kind === 'full' || !this.replyHadSentences) {
      for (const s of splitSentences(msg.content)) said.push(this.queueText(s, lang));
    }
    this.endReply();
    void this.afterReply(); // the kernel's delivery must not wait for playback or follow-up listening
    if (!awaitSpoken) return;
    const outcomes = await Promise.all(said);
    const failed = outcomes.find((o): o is { failed: unknown } => typeof o === 'object');
    if (failed) throw failed.failed instanceof HomeAgentError ? failed.failed : new TtsError(voiceSetting<string>(this.sdk!.settings(), 'tts_engine'), errorMessage(failed.failed), { cause: failed.failed });
    // Emoji or punctuation alone, a TTS that made no audio, or a stop first: nothing was played, so nothing was said.
    if (!outcomes.includes('handed')) throw new HomeAgentError('NOTHING_SPOKEN', 'nothing was spoken: the text has nothing to say aloud, the TTS engine made no audio, or a stop came first');
  }

  private endReply(): void {
    this.replyInput = undefined;
    this.replyHadSentences = false;
  }

  /** Queue one sentence for the speaker; its SayOutcome ('dropped' when it has nothing to say aloud). */
  private queueText(text: string, lang: string): Promise<SayOutcome> {
    const t = speakable(text);
    if (!t) return Promise.resolve('dropped');
    const language = hasHan(t) ? 'zh' : lang;
    return this.speech!.say(t, { language });
  }

  /** After a complete reply: wait until it is spoken, then listen for the answer when the reply asked something. */
  private async afterReply(): Promise<void> {
    const speech = this.speech!;
    // what this reply asked is taken now: a later reply must not inherit it
    const asked = this.expectReply;
    const answer = this.expectAnswer;
    this.expectReply = false;
    this.expectAnswer = false;
    // A yes/no question is timed from when it has been spoken, whether or not the microphone listens for it here.
    if (answer) void speech.idle().then(() => !this.stopped && this.sdk?.publish('plugin.voice.question_spoken', { channel: 'speaker' }));
    if (!asked || this.deps.microphone === undefined || this.muted) return;
    const due = { answer };
    this.followupDue = due;
    this.report({ event: 'followup_expected', answer });
    await speech.idle();
    if (this.stopped || this.followupDue !== due) return; // stop, barge-in, mute or a newer question since
    this.followupDue = undefined;
    if (this.capture) {
      this.report({ event: 'followup_cancelled' }); // something else listens already
      return;
    }
    const ms = voiceSetting<number>(this.sdk!.settings(), 'followup_ms');
    try {
      await this.activate('followup', ms, answer);
    } catch (err) {
      this.log?.warn({ err: errorMessage(err) }, 'voice: follow-up listening failed');
      this.report({ event: 'followup_cancelled' });
    }
  }

  /** The stop button: drop the capture and the reply (the assistant-state plugin follows `stop` itself). */
  private async onStop(): Promise<void> {
    if (this.replyInput) this.ignoredInputs.add(this.replyInput);
    this.endReply();
    this.expectReply = false;
    this.expectAnswer = false;
    this.answerOpen = false;
    this.followupDue = undefined;
    this.capture?.abort();
    await this.speech?.cut();
    this.releaseAudioWaiter();
  }

  /**
   * `plugin.voice.listen` (the one button of hal/gpio): `start` listens as
   * the wake word does (ended by the endpointer; ignored while muted);
   * `cancel` drops the capture in progress, nothing is handed on (the press
   * answered the question the capture waited for).
   */
  private onListenRequest(action: 'start' | 'cancel', source: string): void {
    if (action === 'cancel') {
      if (this.capture && !this.capture.done) this.log?.info({ source }, 'voice: listening cancelled');
      this.capture?.abort();
      return;
    }
    if (this.muted) {
      this.log?.info({ source }, 'voice: muted; not listening');
      return;
    }
    this.activate('button').catch((err: unknown) => this.log?.warn({ err: errorMessage(err), source }, 'voice: could not start listening'));
  }

  /** Tell the assistant state what happened. */
  private report(a: VoiceActivity): void {
    this.sdk?.publish('plugin.voice.activity', a);
  }

  private onWake(d: WakeDetection): void {
    if (this.capture && !this.capture.done) return;
    if (this.muted) return;
    this.log?.info({ wake_word: d.name }, 'voice: wake word');
    this.activate('wake').catch((err: unknown) => this.log?.warn({ err: errorMessage(err) }, 'voice: could not start listening'));
  }
}

/** Whether `pcm` (16 kHz mono s16le) holds speech by the endpointer's rules (vad.ts, default settings): a speech start within it. */
export function holdsSpeech(pcm: Buffer): boolean {
  const ep = new Endpointer({ noSpeechTimeoutMs: Math.max(1000, pcm.length / 32 + 1000) });
  for (let o = 0; o < pcm.length; o += 640) if (ep.push(pcm.subarray(o, Math.min(pcm.length, o + 640))).some((e) => e.type === 'speech_start')) return true;
  return false;
}
