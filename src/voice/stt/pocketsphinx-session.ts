/**
 * One utterance of the pocketsphinx recogniser (SttSession), with the
 * speculative final pass.
 *
 * A pair of decoders (grammar + garbage, pocketsphinx-decoder.ts) is started
 * at once and loads while the person speaks. pause() (the endpointer heard a
 * short silence, plugin.voice.pause_ms) hands the audio so far to that pair
 * at once — a speculative final pass — and a fresh pair is started only if
 * speech goes on; resume() (it did) kills the speculative pass. end() without
 * speech in between takes the speculative result, which is usually ready by
 * the time the endpointer's longer silence has confirmed the end; otherwise
 * it decodes everything now. Only silence can follow a pause without a
 * resume, so both give the same transcript.
 *
 * The session sees the engine only through SessionPorts: the grammar, a
 * lease on its files, a way to start a pair, the verdict, and settings.
 */
import type { SttEndOptions, SttPauseOptions, SttResult, SttSession } from './types.js';
import type { Grammar, GrammarLease } from './pocketsphinx-grammar.js';
import type { DecoderPair, PairOutput } from './pocketsphinx-decoder.js';
import { ANSWER_INTENTS } from '../../intents/fsg.js';
import { YES_RIVALS, YES_RIVAL_MARGIN, hiddenOpposites, markHiddenOpposites, opposedVerdict, oppositeMargin, oppositeSentences, unheardNameSentences, unheardNameVerdict, type AlignWord, type PocketsphinxDetails } from './pocketsphinx-judge.js';
import { NAME_UNHEARD } from '../../intents/filler.js';
import type { HypsegUtterance } from './pocketsphinx-log.js';
import { prepareUtterance, quietestWindow } from './audio-prep.js';
import { speechExtent, type SpeechExtent } from './pocketsphinx-duration.js';
import { SttAbortedError } from './errors.js';

/** Utterances shorter than this (ms of audio) are not decoded: rejected at once. */
export const MIN_UTTERANCE_MS = 150;

/**
 * Decoder pairs a session keeps loaded once speech started: the one the next
 * pause takes, and a spare loaded at the first audio. A pass voided by more
 * speech (resume()) kills its pair; with no spare, the next pause's pass
 * waited for a fresh pair to load its model and grammar first. On the real recordings such a pause often
 * comes 60 to 120 ms after the resume (a short sound inside a word, then the
 * real end): "turn on Standing Light" was acted on 480 to 500 ms after its
 * last word, the pass taking 336 ms where the same length of audio took 133
 * on a loaded pair. Each pair is two or three pocketsphinx_batch processes of
 * about 26 MB each.
 */
export const SPARE_PAIRS = 2;

/** Length of the stretch of room noise padSilence repeats, ms. */
const PAD_SOURCE_MS = 100;

/**
 * `raw` (16 kHz mono s16le) with room noise added after it until the silence
 * after the speech is `padToMs` (SttPauseOptions): the quietest
 * PAD_SOURCE_MS of the audio (10 ms steps), repeated. Not the audio's own
 * last `silenceMs`: the first ms after the last speech frame still hold the
 * word's fading end, and repeated they sounded like more speech (a short
 * "pause" was rejected). Unchanged when the silence is long enough already
 * or the audio too short to hold a quiet stretch. Whole samples only.
 */
export function padSilence(raw: Buffer, { silenceMs, padToMs }: SttPauseOptions): Buffer {
  const missing = Math.floor((padToMs - silenceMs) * 16) * 2;
  const quietest = quietestStretch(raw);
  if (missing <= 0 || !quietest) return raw;
  const quiet = raw.subarray(quietest.at * 320, (quietest.at + PAD_SOURCE_MS / 10) * 320);
  const pad = Buffer.alloc(missing);
  for (let off = 0; off < missing; off += quiet.length) quiet.copy(pad, off, 0, Math.min(quiet.length, missing - off));
  return Buffer.concat([raw, pad]);
}

/** Sum of squares of each whole 10 ms frame (160 samples) of 16 kHz s16le PCM. */
export function frameEnergies(raw: Buffer): number[] {
  const step = 160;
  const frames = Math.floor(raw.length / 2 / step);
  const energy: number[] = [];
  for (let f = 0; f < frames; f++) {
    let e = 0;
    for (let k = 0; k < step; k++) {
      const v = raw.readInt16LE((f * step + k) * 2);
      e += v * v;
    }
    energy.push(e);
  }
  return energy;
}

/**
 * The quietest PAD_SOURCE_MS of `raw` (10 ms steps): its first frame and its
 * mean frame energy (frameEnergies' unit); undefined when the audio is shorter.
 */
export function quietestStretch(raw: Buffer): { at: number; meanEnergy: number } | undefined {
  const win = (PAD_SOURCE_MS / 10) | 0;
  const quietest = quietestWindow(frameEnergies(raw), win);
  return quietest && { at: quietest.at, meanEnergy: quietest.sum / win };
}

/**
 * How much louder than the padding (quietestStretch's mean frame energy)
 * the audio heard after a padded pass may be for the pass to stand: the
 * most any 30 ms of it may hold, as a ratio of energies (12: 10.8 dB). The
 * padding stands for silence the person had not yet been heard to keep; a
 * quiet word end still going on under the VAD's threshold would be cut by
 * it. Set from room noise alone, not from outcomes: over the fixture
 * recordings' stretches before speech, the loudest 30 ms of the room reached
 * 11.6 times the quietest 100 ms (3 to 11.6; a file opening with digital
 * silence aside). Above it the pass is voided and one on the real audio
 * decides at the pause, which waits for a decoder pair to start: at 4, 6 of
 * the real recordings' 27 lulls were voided and the median answer came
 * 645 ms after the last sound (a run that shared the machine); at 12, 3 of
 * 27 and 417 ms; with no check, 372 ms; the same commands right in all three
 * (test/bench/voice.ts, measured with plugin.voice.speculate_ms 150).
 */
export const PAD_FAITHFUL_RATIO = 12;

/**
 * Whether `after` (the audio heard since a padded pass started) is no louder
 * than its padding: every 30 ms (three 10 ms frames) at most `ratio` times
 * the padding's mean frame energy `padEnergy`. Audio shorter than 30 ms is
 * judged on what there is.
 */
export function paddingHeld(after: Buffer, padEnergy: number, ratio = PAD_FAITHFUL_RATIO): boolean {
  return loudestOverPadding(after, padEnergy) <= ratio;
}

/** The loudest 30 ms (three 10 ms frames; fewer when `after` is shorter) of `after` over `padEnergy` (mean frame energy), as a ratio of energies; 0 for no audio. */
export function loudestOverPadding(after: Buffer, padEnergy: number): number {
  const e = frameEnergies(after);
  const n = Math.min(3, e.length);
  let loudest = 0;
  for (let f = 0; f + n <= e.length && n > 0; f++) {
    let sum = 0;
    for (let k = 0; k < n; k++) sum += e[f + k]!;
    loudest = Math.max(loudest, sum / n);
  }
  return loudest / Math.max(padEnergy, 1);
}

/** What a session needs from its engine. */
export interface SessionPorts {
  /** The grammar this utterance is decoded with; rejects with SttNoGrammarError. */
  grammar: Promise<Grammar>;
  /** Hold `g`'s files while the session uses them; undefined when the engine closed meanwhile. */
  lease(g: Grammar): GrammarLease | undefined;
  /** Start a decoder pair for `g` in a fresh directory. */
  startPair(g: Grammar): Promise<DecoderPair>;
  /** The verdict on one decode of `g`; `droppedMs` is what the audio clean-up cut, `extent` where speech is in the decoded audio. */
  judge(g: Grammar, out: PairOutput, droppedMs: number, extent: SpeechExtent): { result: SttResult; details: PocketsphinxDetails };
  /**
   * Align word sequences on the audio `pair` just decoded (pocketsphinx-decoder.ts
   * alignSentences), for the opposite-word check (pocketsphinx-judge.ts
   * OPPOSITE_WORDS); undefined: the check is off.
   */
  align?(pair: DecoderPair, sentences: readonly (readonly AlignWord[])[], signal: AbortSignal): Promise<Array<HypsegUtterance | undefined>>;
  /** Clean the audio before decoding (audio-prep.ts). */
  prepareAudio: boolean;
  /** Kill a pair that has not finished this long after its decode started, ms. */
  finishTimeoutMs: number;
  /**
   * Start the decoder pair at the first audio written, not when the session
   * is made. For the utterance after an early commit (issue 15): it is made
   * the moment the first one is acted on, and three decoders loading their
   * models then took the CPU from the reply being spoken (its first audio
   * came 50 to 90 ms later on 2 cores); the capture writes nothing before
   * speech starts, and the pair loads while the person speaks.
   */
  deferPair?: boolean;
  /** Pairs kept loaded once speech started (SPARE_PAIRS, the default; 1: no spare). */
  sparePairs?: number;
  /** The engine's name, for rejected results made here. */
  engine: string;
  /** Every finished decode's details and the verdict returned for it; returns why a rejected one was refused (SttResult.reason), if known. */
  onDetails(details: PocketsphinxDetails, result: SttResult): string | undefined;
  /** Whether a speculative decode's verdict may be acted on at the pause (pocketsphinx-judge.ts earlyCommittable). */
  early(g: Grammar, result: SttResult, details: PocketsphinxDetails): boolean;
  /**
   * Whether the verdict on the command grammar's decode alone (no compound
   * output) settles the utterance, so the compound decoder need not run
   * (pocketsphinx-judge.ts singleCommandSure); absent: it always runs.
   */
  settled?(judged: { result: SttResult; details: PocketsphinxDetails }): boolean;
  /** The session is over (ended or aborted). */
  onDone(): void;
}

/** A decode of one snapshot of the utterance. */
interface Decode {
  result: Promise<{ result: SttResult; details: PocketsphinxDetails }>;
  pair: DecoderPair | undefined;
}

/** One utterance (see the module comment). */
export class PocketsphinxSession implements SttSession {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private aborted = false;
  /** Aborted with the session: kills its opposite-word alignments. */
  private readonly stopper = new AbortController();
  private ended = false;
  /** Idle decoder pairs for the next decodes (loading or waiting on their ctl pipes), oldest first; a pass takes the first. */
  private idle: Array<Promise<DecoderPair | undefined>> = [];
  /** The first idle pair was asked for (SessionPorts.deferPair). */
  private pairStarted = false;
  /** Audio was written: the spare pair (SPARE_PAIRS) was asked for. */
  private spareStarted = false;
  private speculative: Decode | undefined;
  /** The speculative decode was padded (pause() with SttPauseOptions): where the real audio went on, bytes, and the padding's mean frame energy. */
  private padded: { from: number; energy: number } | undefined;
  private readonly owned = new Set<DecoderPair>();
  private ending: Promise<SttResult> | undefined;
  /** end() said the person ended the utterance (push-to-talk released): its audio is not judged cut. */
  private endedByPerson = false;
  /** The lease on the grammar's files, held until done(). */
  private held: GrammarLease | undefined;
  private finished = false;
  private readonly grammar: Promise<Grammar>;

  constructor(private readonly ports: SessionPorts) {
    this.grammar = ports.grammar.then((g) => {
      if (!this.finished) this.held = ports.lease(g);
      return g;
    });
    this.grammar.catch(() => undefined);
    if (!ports.deferPair) this.startIdle();
  }

  /** Start loading the idle pair, once (at construction, or at the first write() with deferPair). */
  private startIdle(): void {
    if (this.pairStarted) return;
    this.pairStarted = true;
    this.topUp(1);
  }

  /** Start loading pairs until `n` are idle. */
  private topUp(n: number): void {
    while (this.idle.length < n) {
      const p = this.setUp();
      p.catch(() => undefined);
      this.idle.push(p);
    }
  }

  write(pcm: Buffer): void {
    if (this.aborted || this.ended || pcm.length === 0) return;
    this.startIdle();
    // Speech started: the spare pair loads now, well before the first pause (SPARE_PAIRS). On the next turn of the
    // event loop: audio written at once and ended in the same turn (a file decoded whole, `listen` without
    // --realtime, the benchmarks) has no pause to use it, and loading it there only took CPU.
    if (!this.spareStarted) {
      this.spareStarted = true;
      setImmediate(() => {
        if (!this.ended && !this.aborted) this.topUp(this.idle.length + (this.ports.sparePairs ?? SPARE_PAIRS) - 1);
      });
    }
    this.chunks.push(Buffer.from(pcm));
    this.bytes += pcm.length;
  }

  /**
   * Speech paused: decode the audio so far now (see the module comment),
   * with its trailing silence repeated up to `opts.padToMs` (padSilence).
   */
  pause(opts?: SttPauseOptions): void {
    if (this.aborted || this.ended || this.speculative || this.bytes < MIN_UTTERANCE_MS * 32) return;
    const quiet = opts && opts.padToMs > opts.silenceMs ? quietestStretch(Buffer.concat(this.chunks)) : undefined;
    this.padded = quiet ? { from: this.bytes, energy: quiet.meanEnergy } : undefined;
    this.speculative = this.startDecode(this.takeIdle(), false, opts);
  }

  /**
   * Whether the audio heard since a padded pause() is as quiet as its
   * padding (paddingHeld): false means the pass decoded a cut word, and the
   * caller voids it (resume()) and pauses again on the real audio; true when
   * the pass was not padded or none runs.
   */
  paddingHeld(): boolean {
    const p = this.padded;
    if (!p || !this.speculative) return true;
    return paddingHeld(Buffer.concat(this.chunks).subarray(p.from), p.energy);
  }

  /** Speech went on after pause(): the speculative decode is void. Ignored after end(). */
  resume(): void {
    const spec = this.speculative;
    if (!spec || this.ended || this.aborted) return;
    this.speculative = undefined;
    this.padded = undefined;
    if (spec.pair) void this.release(spec.pair);
    spec.result.catch(() => undefined);
    // More speech: the next pause takes the spare pair, loaded already. A fresh one loads now only when there is
    // none: loading beside the next pass (often 60 to 120 ms away) slowed it.
    this.topUp(1);
  }

  /**
   * The speculative decode's result once ready (SttSession.speculation),
   * `early` set when it may be acted on at the pause; undefined when there
   * is none, or it was voided or failed.
   */
  speculation(): Promise<SttResult | undefined> {
    const spec = this.speculative;
    if (!spec || this.aborted) return Promise.resolve(undefined);
    return Promise.all([spec.result, this.grammar]).then(
      ([{ result, details }, g]) => (this.speculative === spec && !this.aborted ? { ...result, early: this.ports.early(g, result, details) } : undefined),
      () => undefined,
    ).catch(() => undefined);
  }

  /** No more audio: the result (the same promise on every call). */
  end(opts: SttEndOptions = {}): Promise<SttResult> {
    if (this.ending === undefined && opts.endedByPerson) this.endedByPerson = true;
    this.ending ??= this.finish();
    return this.ending;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.stopper.abort();
    this.chunks.length = 0;
    void this.releaseAll().then(() => this.done());
  }

  /** The session is over: give the grammar back (a replaced grammar's files may go now). */
  private done(): void {
    if (this.finished) return;
    this.finished = true;
    this.held?.release();
    this.held = undefined;
    this.ports.onDone();
  }

  /** Start a decoder pair; undefined when aborted or finished meanwhile. Rejects when the grammar is missing. */
  private async setUp(): Promise<DecoderPair | undefined> {
    const g = await this.grammar;
    if (this.aborted || this.finished || !this.held) return undefined;
    const pair = await this.ports.startPair(g);
    this.owned.add(pair);
    if (this.aborted) {
      await this.release(pair);
      return undefined;
    }
    return pair;
  }

  /**
   * Take the idle pair (starting one if there is none). A fresh pair is
   * started only when needed (resume()), so its model loading does not
   * compete for the CPU with a speculative pass.
   */
  private takeIdle(): Promise<DecoderPair | undefined> {
    const taken = this.idle.shift() ?? this.setUp();
    taken.catch(() => undefined);
    this.pairStarted = true;
    return taken;
  }

  private startDecode(pair: Promise<DecoderPair | undefined>, final: boolean, pad?: SttPauseOptions): Decode {
    const raw = pad ? padSilence(Buffer.concat(this.chunks), pad) : Buffer.concat(this.chunks);
    const decode = { pair: undefined } as Decode;
    decode.result = pair.then(async (p) => {
      if (!p || this.aborted) throw new SttAbortedError();
      decode.pair = p;
      // A speculative decode voided while its pair was still loading.
      if (!final && this.speculative !== decode) {
        await this.release(p);
        throw new SttAbortedError();
      }
      return this.decode(p, raw, !final);
    });
    decode.result.catch(() => undefined);
    return decode;
  }

  private async finish(): Promise<SttResult> {
    if (this.aborted) throw new SttAbortedError();
    this.ended = true;
    const t0 = performance.now();
    const decode = this.speculative ?? this.startDecode(this.takeIdle(), true);
    try {
      const { result, details } = await decode.result;
      const reason = this.ports.onDetails(details, result);
      const why = result.rejected ? { ...(reason ? { reason } : {}), ...(details.hypothesis ? { heard: details.hypothesis } : {}) } : {};
      return { ...result, ...why, finish_ms: performance.now() - t0 };
    } catch (err) {
      if (this.aborted) throw new SttAbortedError();
      throw err;
    } finally {
      await this.releaseAll();
      this.done();
    }
  }

  /**
   * Run one decode of `raw` on `pair`; the pair is used up. `atPause`: a
   * speculative pass, whose result counts only when silence followed (so the
   * audio is not cut).
   */
  private async decode(pair: DecoderPair, raw: Buffer, atPause: boolean): Promise<{ result: SttResult; details: PocketsphinxDetails }> {
    const timer = setTimeout(() => pair.kill(), this.ports.finishTimeoutMs);
    try {
      const prepared = this.ports.prepareAudio ? prepareUtterance(raw) : { pcm: raw, report: { droppedSamples: 0, gainDb: 0 } };
      const droppedMs = prepared.report.droppedSamples / 16;
      if (prepared.pcm.length < MIN_UTTERANCE_MS * 32) {
        // Nothing worth decoding; still surface a missing binary as such (the kill itself is no failure).
        pair.kill();
        await Promise.race([pair.missingBinary(), new Promise((r) => setTimeout(r, 50))]);
        return {
          result: { text: '', confidence: 0, rejected: true, engine: this.ports.engine },
          details: { hypothesis: '', grammarMismatch: false, frames: 0, droppedMs },
        };
      }
      const extent = { ...speechExtent(prepared.pcm), ...(atPause ? { silenceConfirmed: true } : {}), ...(this.endedByPerson && !atPause ? { endedByPerson: true } : {}) };
      const settled = this.ports.settled;
      const compoundNeeded = (out: PairOutput): boolean => !settled || !settled(this.ports.judge(pair.grammar, out, droppedMs, extent));
      const judged = this.ports.judge(pair.grammar, await pair.decode(prepared.pcm, compoundNeeded), droppedMs, extent);
      return await this.checkOpposites(pair, judged);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The opposite-word check (pocketsphinx-judge.ts OPPOSITE_WORDS) of a
   * result that would act: its words and each with a lock word swapped are
   * aligned on the same audio (still in the pair's directory), and it acts
   * only when the heard words win by OPPOSITE_MARGIN. An alignment that
   * fails leaves the command unsure: rejected. A command whose opposite may
   * hide in the sounds around a word (hiddenOpposites) is marked to ask first,
   * aligned or not.
   */
  private async checkOpposites(pair: DecoderPair, judged: { result: SttResult; details: PocketsphinxDetails }): Promise<{ result: SttResult; details: PocketsphinxDetails }> {
    if (!judged.result.rejected && judged.result.text === 'yes' && !judged.result.intent && this.ports.align) return this.checkYes(pair, judged);
    const unheard = judged.result.intent?.slots[NAME_UNHEARD] !== undefined && !ANSWER_INTENTS.has(judged.result.intent.intent);
    if (!judged.result.rejected && unheard && this.ports.align) return this.checkUnheardName(pair, judged);
    const acts = !judged.result.rejected && (judged.result.intent !== undefined || (judged.result.intents?.length ?? 0) > 0);
    if (!acts) return judged;
    // No lock word to align: an opposite that may hide in the sounds around a word still asks first.
    const unaligned = { ...judged, result: markHiddenOpposites(judged.result, hiddenOpposites(judged.details.hypothesis)) };
    if (!this.ports.align) return unaligned;
    // A question changes nothing: a correction after it ("what's the weather like in New York") needs no check.
    const changes = [judged.result.intent, ...(judged.result.intents ?? [])].some((m) => m !== undefined && !ANSWER_INTENTS.has(m.intent));
    const sentences = oppositeSentences(judged.details.hypothesis, { corrections: changes, ...(pair.grammar.nameRivals ? { nameRivals: pair.grammar.nameRivals } : {}) });
    if (sentences.length < 2) return unaligned;
    const aligned = await this.ports.align(pair, sentences, this.stopper.signal).catch(() => undefined);
    if (this.aborted) throw new SttAbortedError();
    return opposedVerdict(judged, sentences, aligned);
  }

  /**
   * A name the filler spelt in phones (NAME_UNHEARD), aligned again with each
   * of the home's names the command could take in its place
   * (pocketsphinx-judge.ts unheardNameSentences): one that fits nearly as
   * well as the phones makes the command that name's, asking for a yes first
   * (unheardNameVerdict); otherwise, or when the alignment fails, it stays a
   * name the home does not have.
   */
  private async checkUnheardName(pair: DecoderPair, judged: { result: SttResult; details: PocketsphinxDetails }): Promise<{ result: SttResult; details: PocketsphinxDetails }> {
    const candidates = unheardNameSentences(judged.details.hypothesis, judged.result.intent!, pair.grammar.vocab, pair.grammar.phones);
    if (candidates.sentences.length < 2) return judged;
    const aligned = await this.ports.align!(pair, candidates.sentences, this.stopper.signal).catch(() => undefined);
    if (this.aborted) throw new SttAbortedError();
    return unheardNameVerdict(judged, candidates, aligned, pair.grammar.vocab);
  }

  /**
   * A heard "yes" (the answer grammar) and each YES_RIVALS word aligned on
   * the same audio: it counts only when "yes" leads every rival by
   * YES_RIVAL_MARGIN per frame (details.yesMargin); otherwise, or when the
   * alignment fails, it is rejected: a false yes confirms a risky action.
   */
  private async checkYes(pair: DecoderPair, judged: { result: SttResult; details: PocketsphinxDetails }): Promise<{ result: SttResult; details: PocketsphinxDetails }> {
    const sentences = [['yes'], ...YES_RIVALS.map((w) => [w])];
    const aligned = await this.ports.align!(pair, sentences, this.stopper.signal).catch(() => undefined);
    if (this.aborted) throw new SttAbortedError();
    const yesMargin = aligned ? oppositeMargin(aligned) : -Infinity;
    const details = { ...judged.details, yesMargin };
    if (yesMargin >= YES_RIVAL_MARGIN) return { result: judged.result, details };
    return { result: { ...judged.result, text: '', rejected: true, confidence: Math.min(judged.result.confidence, 0.5) }, details };
  }

  /** Kill a pair's decoders and remove its directory (once). */
  private async release(pair: DecoderPair): Promise<void> {
    if (!this.owned.delete(pair)) return;
    await pair.release();
  }

  private async releaseAll(): Promise<void> {
    await Promise.all([...this.owned].map((p) => this.release(p)));
    // A pair still being set up releases itself (aborted) or is released here once it exists.
    for (const idle of this.idle) void idle.then((p) => p && this.release(p), () => undefined);
  }
}
