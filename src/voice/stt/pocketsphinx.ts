/**
 * Local command recognition with the real pocketsphinx of Debian 12:
 * packages pocketsphinx + pocketsphinx-en-us, version 0.8+5prealpha, model in
 * /usr/share/pocketsphinx/model/en-us. The grammar is the intent templates
 * filled with the home's vocabulary (src/intents buildGrammar, loaded as an
 * epsilon-free `-fsg`), the dictionary a subset of the CMU dictionary plus
 * espeak-ng-generated pronunciations (pronunciation.ts).
 *
 * Decoding is one pass over the whole utterance with `pocketsphinx_batch`:
 * batch cepstral mean normalisation (the mean of this utterance, not the
 * live estimate that starts from a fixed `-cmninit` and is still wrong
 * during a 2 s command) and wide beams; with live CMN and the default beams
 * most real recordings either found no path to the grammar's final state or
 * came out as another sentence. The decoders start when the utterance
 * starts, load the model and grammar while the person speaks, and wait on a
 * named pipe for the utterance (their `-ctl` file). At the first pause in
 * speech (SttSession.pause(), plugin.voice.pause_ms) the audio so far is
 * cleaned (audio-prep.ts), written once and handed over: the search runs
 * while the endpointer still waits for the rest of its silence, and end()
 * takes that result when no speech came in between (PocketsphinxSession).
 *
 * A third decoder runs the compound grammar (the command grammar with a
 * joint, "and"/"then", after every sentence, src/intents/fsg.ts) on the same
 * audio, after the other two and only when their verdict is not one sure
 * command (pocketsphinx-judge.ts singleCommandSure): when it hears two whole
 * commands, its path is judged instead, so "turn on the kitchen lights and
 * lock the front door" is two commands, not "turn on the kitchen lights on
 * the office" (issue 15).
 *
 * A grammar accepts anything as its nearest sentence, so a second measure
 * decides rejection: a garbage decoder runs on the same audio, a free loop
 * of the model's phones (context-dependent, the same acoustic model and
 * front end as the grammar). When the grammar path's acoustic score per
 * frame trails the free loop's by more than a threshold, the speech is out
 * of grammar. No path to the final state, or a transcript no template
 * matches, is a rejection too. So is speech whose length does not fit the
 * matched sentence (ms per phone outside a band) or audio that ends while
 * speech is still going (pocketsphinx-duration.ts).
 *
 * This module is the engine (SttEngine 'pocketsphinx'): options, defaults,
 * and the wiring of its parts, each behind a narrow interface:
 * - pocketsphinx-grammar.ts: grammar generations, leases on their files,
 *   per-utterance directories (GrammarFiles);
 * - pocketsphinx-decoder.ts: the decoder processes of one utterance
 *   (DecoderPair);
 * - pocketsphinx-judge.ts: the verdict on a decode (judgeDecode);
 * - pocketsphinx-session.ts: one utterance with the speculative final pass
 *   (PocketsphinxSession, which sees the engine only through SessionPorts).
 */
import type { FillerWeights } from '../../intents/filler.js';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { createLogger } from '../../kernel/log.js';
import type { Vocabulary } from '../../intents/types.js';
import type { SttEngine, SttResult, SttSession, SttStartOptions } from './types.js';
import { DEBIAN_MODEL_DIR } from './pronunciation.js';
import { GrammarFiles, type Grammar, type GrammarInfo } from './pocketsphinx-grammar.js';
import { alignSentences, DecoderPair, garbageShare, killDecoderProcess, type DecoderSettings } from './pocketsphinx-decoder.js';
import { ANSWER_MAX_SCORE_GAP, DEFAULT_MAX_SCORE_GAP, earlyCommittable, judgeDecode, rejectionReason, singleCommandSure, type AlignWord, type PocketsphinxDetails } from './pocketsphinx-judge.js';
import { parseFsg, standing, type FsgIndex, type SentenceStanding } from './fsg-walk.js';
import { PocketsphinxSession } from './pocketsphinx-session.js';
import type { DurationLimits } from './pocketsphinx-duration.js';

/**
 * Front-end settings shared by both decoders (so their frames line up).
 * `-remove_noise yes` (pocketsphinx's default spectral-subtraction noise
 * removal; it was off while clicks at the start of an utterance threw its
 * noise estimate off, which audio-prep.ts now removes): on the fixture
 * recordings 16 of 18 commands right instead of 15, on the 60 held-out
 * utterances (test/voice-stt/held-out.test.ts) and a 100-utterance variant
 * of them the same as without. `-cmn batch`: the cepstral mean of the
 * utterance itself.
 */
export const DEFAULT_FRONTEND_ARGS: readonly string[] = ['-remove_noise', 'yes', '-cmn', 'batch'];

/**
 * Search settings of the grammar decoder: a language weight of 2 (every
 * sentence of the grammar is equally likely, see intents/fsg.ts, so the
 * weight decides no final choice; a low one keeps sentences with a rare
 * first word from being pruned early), wide beams (the defaults prune the right path of
 * real, imperfect speech and leave no path to the final state) and a cap of
 * 3000 active HMMs per frame (`-maxhmmpf`, default 30000): the wide beams
 * keep too many paths alive in the first frames of a large grammar; the cap
 * keeps the best ones and takes a third off the decode time with the same
 * results on the fixture and held-out recordings. Measured with
 * test/bench/voice-stt.ts.
 */
export const DEFAULT_DECODER_ARGS: readonly string[] = ['-lw', '2', '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60', '-maxhmmpf', '3000'];

/**
 * Search settings of the compound grammar's decoder (two commands in one
 * breath): those of the command grammar. Its joint keeps the grammar's first
 * words active after every sentence, which doubles its decode time (0.083
 * against 0.040 × real time on a 2.4 s recording here), and on two cores the
 * third decoder delays every result: voice.first_audio_command_from_last_sound
 * p50 704 ms against 626 without it. A cap of 800 active HMMs per frame
 * (0.048 × real time, p50 649 ms) missed two more blends on the report voices
 * of test/bench/voice-synth.ts (voice.synth_wrong_action_rate 1.6 % against
 * 0.5 %; the tune voices gave 6.8 % with either, so this choice looked at the
 * report voices): a wrong action costs more than 55 ms, so the cap stays.
 */
export const DEFAULT_COMPOUND_ARGS: readonly string[] = DEFAULT_DECODER_ARGS;

/** Search settings of the garbage (free phone loop) decoder. */
export const DEFAULT_GARBAGE_ARGS: readonly string[] = ['-lw', '2', '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60'];

/** Options of PocketsphinxStt. */
export interface PocketsphinxOptions {
  /** Decoder binary; default 'pocketsphinx_batch' on PATH. */
  binary?: string;
  /** Model directory holding en-us/ (acoustic model); default Debian's. */
  modelDir?: string;
  /** Full pronouncing dictionary; default Debian's cmudict-en-us.dict. */
  dictionary?: string;
  /** Where grammar, dictionary and per-utterance files go; default a fresh directory in os.tmpdir(), removed by close(). */
  workDir?: string;
  /** Front-end settings for both decoders (see DEFAULT_FRONTEND_ARGS). */
  frontendArgs?: readonly string[];
  /** Search settings of the grammar decoder (see DEFAULT_DECODER_ARGS). */
  decoderArgs?: readonly string[];
  /** Clean the audio before decoding (DC removal, leading burst, see audio-prep.ts); default true. */
  prepareAudio?: boolean;
  /** Out-of-grammar rejection by the garbage-loop comparison. */
  rejection?: {
    /** Default true. */
    enabled?: boolean;
    /** Reject when (garbage ascr - grammar ascr) / frames exceeds this; default DEFAULT_MAX_SCORE_GAP. */
    maxScoreGap?: number;
    /** Garbage decoder settings (see DEFAULT_GARBAGE_ARGS). */
    garbageArgs?: readonly string[];
    /**
     * Reject speech whose length does not fit the matched sentence, or audio
     * cut while speech went on (pocketsphinx-duration.ts); default
     * DEFAULT_DURATION_LIMITS, false: off. Applies even when `enabled` is false.
     */
    duration?: DurationLimits | false;
    /** How far inside maxScoreGap two commands in one breath must score to act; default COMPOUND_MARGIN (pocketsphinx-judge.ts). */
    compoundMargin?: number;
    /**
     * Check a heard lock word against its opposite ("lock"/"unlock") by
     * aligning both sentences on the audio (pocketsphinx-judge.ts
     * OPPOSITE_WORDS, OPPOSITE_MARGIN); default true. Applies even when `enabled` is false.
     */
    opposites?: boolean;
  };
  /** espeak-ng binary for generated pronunciations. */
  espeakBinary?: string;
  /** Prices of the grammar's filler path for names the home does not have (src/intents/filler.ts); default DEFAULT_FILLER_WEIGHTS; null: no filler (benchmark baseline). */
  fillerWeights?: FillerWeights | null;
  /** The compound grammar's probability of a second command after a whole sentence ("… and lock the front door"; src/intents/fsg.ts DEFAULT_JOINT_PROB). */
  jointProb?: number;
  /** Probability of an opening that makes a sentence no command ("don't turn on ...", "I turned off ..."; src/intents/fsg.ts DEFAULT_NOT_COMMAND_PROB); 0: none (the benchmark's baseline). */
  notCommandProb?: number;
  /**
   * Decode an utterance on the compound grammar too, with a third decoder
   * process, to hear two commands said in one breath (issue 15), when the
   * command grammar's verdict is not one sure command; default true. False:
   * one command per utterance (as before; the benchmark's baseline).
   */
  compound?: boolean;
  /** Kill a decoder that has not finished this long after end(); default 30000 ms. */
  finishTimeoutMs?: number;
  /** Decoder pairs an utterance keeps loaded once speech started (pocketsphinx-session.ts SPARE_PAIRS, the default): 1 loads none ahead. */
  sparePairs?: number;
  /** Mark a sure speculative result `early` (SttResult.early; issue 15 "Grammar-aware endpointing"); default true. */
  earlyCommit?: boolean;
}

const earlyLog = createLogger('stt:pocketsphinx');

/**
 * For the `stt: decoded` log line: why a command that was heard asks for a
 * yes before it acts (IntentMatch.unsure_between): `asks_first` the two
 * words it could not tell apart (a lock word and its opposite, a name word
 * and a near name, or a doubted name word and "another name"), and the
 * doubted word's score gap when that is the reason.
 */
function asksFirst(result: SttResult, d: PocketsphinxDetails): Record<string, unknown> {
  const pairs = [result.intent, ...(result.intents ?? [])].flatMap((m) => (m?.unsure_between ? [m.unsure_between] : []));
  if (!pairs.length) return {};
  return { asks_first: pairs.length === 1 ? pairs[0] : pairs, ...(d.doubtedNameWord ? { doubted_word_gap: Math.round(d.doubtedNameWord.gap * 10) / 10 } : {}) };
}

/** Longest an opposite-word alignment may run, ms (they take about 50 ms; a hung one must not hold the answer for finishTimeoutMs). */
const ALIGN_TIMEOUT_MS = 3000;

const fsgCache = new WeakMap<Grammar, Map<string, FsgIndex | null>>();

/**
 * Where `words` stand in `g`'s grammar `file` (command.fsg or
 * continuation.fsg, read once per grammar). A grammar whose FSG cannot be read stands nowhere: nothing
 * is complete, so nothing is acted on early.
 */
function grammarStanding(g: Grammar, file: string, words: readonly string[]): SentenceStanding {
  let files = fsgCache.get(g);
  if (!files) fsgCache.set(g, (files = new Map()));
  let fsg = files.get(file);
  if (fsg === undefined) {
    try {
      fsg = parseFsg(readFileSync(path.join(g.dir, file), 'utf8'));
    } catch {
      fsg = null;
    }
    files.set(file, fsg);
  }
  return fsg ? standing(fsg, words) : { complete: false, continuable: false, next: [] };
}

/** The pocketsphinx command recogniser (SttEngine 'pocketsphinx'). */
export class PocketsphinxStt implements SttEngine {
  readonly name = 'pocketsphinx';
  private readonly files: GrammarFiles;
  private readonly decoders: DecoderSettings;
  private readonly live = new Set<ChildProcess>();
  private readonly open = new Set<PocketsphinxSession>();
  /** Details of the last finished utterance. */
  lastDetails: PocketsphinxDetails | undefined;
  /** One phone-loop decode for the sessions that decode the same audio at once (a question's answer and command grammars). */
  private readonly garbageShare = garbageShare();

  constructor(private readonly opts: PocketsphinxOptions = {}) {
    this.files = new GrammarFiles({ dictionary: opts.dictionary, espeakBinary: opts.espeakBinary, workDir: opts.workDir, fillerWeights: opts.fillerWeights, jointProb: opts.jointProb, notCommandProb: opts.notCommandProb });
    this.decoders = {
      binary: opts.binary ?? 'pocketsphinx_batch',
      hmm: path.join(opts.modelDir ?? DEBIAN_MODEL_DIR, 'en-us'),
      frontendArgs: opts.frontendArgs ?? DEFAULT_FRONTEND_ARGS,
      decoderArgs: opts.decoderArgs ?? DEFAULT_DECODER_ARGS,
      garbageArgs: opts.rejection?.enabled === false ? undefined : (opts.rejection?.garbageArgs ?? DEFAULT_GARBAGE_ARGS),
      compoundArgs: opts.compound === false ? undefined : (opts.decoderArgs ?? DEFAULT_COMPOUND_ARGS),
    };
  }

  /**
   * Build the grammar and dictionary for `vocab` (call again whenever the
   * devices change). Sessions started afterwards use it; a session started
   * while it is being built waits for it. Overlapping calls: the newest
   * vocabulary wins. A failed build keeps the grammar in use. Rejects with
   * GrammarError or PronunciationError.
   */
  setVocabulary(vocab: Vocabulary): Promise<GrammarInfo> {
    return this.files.setVocabulary(vocab);
  }

  /** Start one utterance. PCM: 16 kHz mono s16le. end() rejects with STT_NO_GRAMMAR before the first setVocabulary(). */
  start(opts?: SttStartOptions): SttSession {
    const fsgFile = opts?.answer ? 'answer.fsg' : opts?.continuation ? 'continuation.fsg' : 'command.fsg';
    const answers = opts?.answer === true;
    const maxScoreGap = this.opts.rejection?.maxScoreGap ?? DEFAULT_MAX_SCORE_GAP;
    const session: PocketsphinxSession = new PocketsphinxSession({
      grammar: this.files.current(),
      lease: (g) => {
        const lease = this.files.lease(g);
        if (lease) this.open.add(session);
        return lease;
      },
      startPair: async (g) => DecoderPair.start(this.decoders, g, await this.files.utteranceDir(), (p) => this.track(p), fsgFile, this.garbageShare),
      judge: (g, out, droppedMs, extent) =>
        judgeDecode(out, { engine: this.name, vocab: g.vocab, maxScoreGap, droppedMs, extent, phones: g.phones, durationLimits: this.opts.rejection?.duration, compoundMargin: this.opts.rejection?.compoundMargin, standing: (words) => grammarStanding(g, fsgFile, words), answers, continuation: opts?.continuation === true }),
      settled: (judged) => singleCommandSure(judged.result, judged.details, maxScoreGap),
      early: (g, result, details) => {
        const ok = this.opts.earlyCommit !== false && earlyCommittable(result, details, maxScoreGap, g.vocab, undefined, (words) => grammarStanding(g, fsgFile, words));
        earlyLog.debug({ early: ok, hypothesis: details.hypothesis, scoreGap: details.scoreGap, standing: details.standing, rejected: result.rejected }, 'speculative pass at the pause');
        return ok;
      },
      ...(this.opts.rejection?.opposites === false ? {} : {
            align: (pair: DecoderPair, sentences: readonly (readonly AlignWord[])[], signal: AbortSignal) =>
              alignSentences(this.decoders, pair.dir, pair.dict, sentences, (p) => this.track(p), Math.min(ALIGN_TIMEOUT_MS, this.opts.finishTimeoutMs ?? 30_000), signal).catch((err: unknown) => {
                // The command is then not acted on (unsure); say why in the log, not by blaming the speech.
                earlyLog.warn({ err: (err as Error).message, sentences: sentences.map((w) => w.join(' ')) }, 'opposite-word check failed: the lock command is not acted on');
                throw err;
              }),
          }),
      prepareAudio: this.opts.prepareAudio ?? true,
      finishTimeoutMs: this.opts.finishTimeoutMs ?? 30_000,
      deferPair: opts?.continuation === true,
      ...(this.opts.sparePairs !== undefined ? { sparePairs: this.opts.sparePairs } : {}),
      engine: this.name,
      onDetails: (d, result) => {
        this.lastDetails = d;
        // One line per utterance: what the decoder heard and, when nothing is done with it, which rule refused it.
        const scoreGap = d.scoreGap !== undefined ? Math.round(d.scoreGap * 10) / 10 : undefined;
        const reason = rejectionReason(result, d, answers ? Math.min(maxScoreGap, ANSWER_MAX_SCORE_GAP) : maxScoreGap);
        // What was heard is the household's speech: at `debug` only (README: logs at `info` hold no conversation text).
        earlyLog.info({ rejected: result.rejected, ...(reason ? { reason } : {}), score_gap: scoreGap, words: d.hypothesis.split(' ').filter((w) => w && !/^(<.*>|\+\+.*\+\+|\[.*\])$/.test(w)).length, ...(result.unsure_between ? { unsure_between: result.unsure_between } : {}), ...asksFirst(result, d), ...(answers ? { answer: true } : {}) }, 'stt: decoded');
        earlyLog.debug({ hypothesis: d.hypothesis }, 'stt: heard');
        return reason;
      },
      onDone: () => this.open.delete(session),
    });
    return session;
  }

  /** Abort every open session, kill running decoders and remove the work directory when it was created here. Sessions started later reject end() with STT_NO_GRAMMAR. */
  async close(): Promise<void> {
    const closing = this.files.close();
    for (const session of [...this.open]) session.abort();
    for (const p of this.live) killDecoderProcess(p);
    this.live.clear();
    await closing;
  }

  private track(p: ChildProcess): void {
    this.live.add(p);
    p.once('close', () => this.live.delete(p));
    p.once('error', () => this.live.delete(p));
  }
}
