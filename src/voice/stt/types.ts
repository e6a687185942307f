/**
 * Speech-to-text engine interface shared by the local command recogniser
 * (pocketsphinx with a grammar built from the intent templates) and open
 * dictation (Wyoming ASR). Audio is 16 kHz mono signed 16-bit little-endian PCM.
 */
import type { IntentMatch } from '../../intents/types.js';

/** The outcome of one utterance. */
export interface SttResult {
  /** Normalised transcript (lower case, numbers as digits); '' when nothing was recognised. */
  text: string;
  /** 0..1, engine-specific but comparable within an engine. */
  confidence: number;
  /** True when the engine judged the speech to be outside what it can recognise (out of grammar, noise). */
  rejected: boolean;
  /** Engine name ('pocketsphinx', 'wyoming'). */
  engine: string;
  /** Set by grammar engines when the transcript matched an intent template. */
  intent?: IntentMatch;
  /**
   * Set by grammar engines instead of `intent` for two commands in one breath
   * ("turn on the kitchen light and lock the front door"): each half's match,
   * in the order said; `text` holds both. The home plugin places both before
   * either acts (issue 15).
   */
  intents?: IntentMatch[];
  /**
   * Set on a rejected result when the engine heard a command with one of two
   * opposite words and could not tell which was said: [heard, opposite]
   * (e.g. ['lock', 'unlock']; pocketsphinx-judge.ts OPPOSITE_WORDS). The box
   * says which words it could not tell apart instead of a bare "didn't catch that".
   */
  unsure_between?: [string, string];
  /**
   * On a rejected result, for the logs: the rule that refused it, in one
   * word (pocketsphinx-judge.ts rejectionReason: 'not_command',
   * 'score_gap', ...), and what the decoder heard (`heard`, with `ph_...`
   * for sounds it placed in no word). Never acted on.
   */
  reason?: string;
  heard?: string;
  /** Wall time spent after end() was called, ms. */
  finish_ms?: number;
  /**
   * Set on a speculation() result the engine is sure of: a complete command
   * no longer sentence extends, clearly accepted. The capture may act on it
   * at the first pause instead of waiting for the full silence (issue 15
   * "Grammar-aware endpointing").
   */
  early?: boolean;
}

/** How an utterance ended, for engines that judge whether its audio is whole. */
export interface SttEndOptions {
  /**
   * The person ended it (a push-to-talk button released): audio that stops
   * right after the last word is what they meant to say, not a cut-off
   * recording, so no "cut" rejection applies (a length that does not fit the
   * sentence still does).
   */
  endedByPerson?: boolean;
}

/** How the audio handed to SttSession.pause() ends. */
export interface SttPauseOptions {
  /** The audio so far ends with this much silence after the last speech, ms. */
  silenceMs: number;
  /**
   * Decode it as if this much silence followed the speech, ms: the engine
   * adds the room's noise (pocketsphinx: the quietest stretch of the
   * utterance, repeated) until it does. A final pass started at a short lull then sees the
   * trailing silence the pass at the full pause would have seen (a word with
   * little audio after it scores worse), while the person is still silent.
   */
  padToMs: number;
}

/** One utterance being decoded while the person speaks. */
export interface SttSession {
  /** Feed PCM (16 kHz mono s16le) as it arrives. */
  write(pcm: Buffer): void;
  /** No more audio: resolve with the result. */
  end(opts?: SttEndOptions): Promise<SttResult>;
  /** Drop the utterance (stop, barge-in). */
  abort(): void;
  /**
   * Optional hint: speech paused (the endpointer heard a short silence,
   * plugin.voice.pause_ms). An engine whose final pass needs the whole
   * utterance may run it now on the audio so far; when end() follows without
   * resume(), only silence came after, and that result is the answer. This
   * is how decoding finishes during the endpointer's longer silence wait.
   */
  pause?(opts?: SttPauseOptions): void;
  /** Optional hint: speech went on after pause(); work started by pause() is void. */
  resume?(): void;
  /**
   * Optional: the result of the final pass pause() started, once it is
   * ready; undefined when there is none or it was voided (resume, abort).
   * A result with `early: true` may be acted on now: end() without more
   * audio then resolves with the same result.
   */
  speculation?(): Promise<SttResult | undefined>;
  /**
   * Optional: whether the audio heard since a pause() with padding is as
   * quiet as the padding the engine decoded in its place (false: the pass
   * heard a word cut short; the caller voids it with resume() and may
   * pause() again). True when nothing was padded.
   */
  paddingHeld?(): boolean;
}

/** Options of one utterance. */
export interface SttStartOptions {
  language?: string;
  /**
   * The utterance right after one acted on at its pause (issue 15): a
   * grammar engine decodes it with sentences that may open with "and" or
   * "then". Engines without a grammar ignore it.
   */
  continuation?: boolean;
  /**
   * A yes/no question waits for this utterance (a risky action's
   * confirmation): a grammar engine decodes it with the answer grammar
   * (src/intents/answers.ts: "yes", "no thanks", "go ahead", ...) and
   * returns the phrase as the text, with no intent. Engines without a
   * grammar ignore it.
   */
  answer?: boolean;
}

/** An STT engine. */
export interface SttEngine {
  readonly name: string;
  /** Start decoding one utterance. Errors (missing binary, unreachable service) reject end() with a typed error. */
  start(opts?: SttStartOptions): SttSession;
  close?(): Promise<void>;
}
