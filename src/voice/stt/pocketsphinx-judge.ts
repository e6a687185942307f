/**
 * The pocketsphinx recogniser's verdict on one decode (pure, no IO): the
 * transcript, the intent it matches, and whether the speech is rejected.
 *
 * A grammar accepts anything as its nearest sentence, so a second measure
 * decides rejection: a garbage decoder runs on the same audio, a free loop
 * of the model's phones (context-dependent, the same acoustic model and
 * front end as the grammar). When the grammar path's acoustic score per
 * frame trails the free loop's by more than a threshold, the speech is out
 * of grammar. No path to the final state, or a transcript no template
 * matches, is a rejection too.
 */
import { matchIntent, normaliseText } from '../../intents/index.js';
import type { Vocabulary } from '../../intents/types.js';
import { hypsegText } from './pocketsphinx-log.js';
import type { PairOutput } from './pocketsphinx-decoder.js';
import type { SttResult } from './types.js';

/**
 * Default rejection threshold: acoustic score units per 10 ms frame by which
 * the grammar path may trail the free phone loop. Calibrated on the fixture
 * recordings as the voice pipeline decodes them (from the pre-roll to 400 ms,
 * plugin.voice.pause_ms, after the last word; test/bench/voice-stt.ts prints
 * the measure): commands -5..13, out-of-grammar speech forced through the
 * grammar 21 and 23; the threshold sits between the two groups. The measure
 * is a mean over all frames, so it depends on how much silence follows the
 * speech: with only 200 ms, a short word ("pause") reaches 18.
 */
export const DEFAULT_MAX_SCORE_GAP = 17.5;

/** Details of a decode, for tuning and benchmarks. */
export interface PocketsphinxDetails {
  hypothesis: string;
  grammarMismatch: boolean;
  /** (garbage ascr - grammar ascr) / frames; undefined without rejection decoder. */
  scoreGap?: number;
  /** Unused since the garbage loop replaced the phone-loop coverage measure; kept for callers that print it. */
  coverage?: number;
  frames: number;
  /** ms of audio dropped from the start by the audio clean-up. */
  droppedMs?: number;
}

/**
 * Turn a pair's output into an SttResult for engine `engine`: `vocab` is the
 * vocabulary the grammar was built from, `maxScoreGap` the rejection
 * threshold, `droppedMs` what the audio clean-up cut from the start.
 * Confidence: 1 well inside the threshold, 0.5 at it, towards 0 beyond it.
 */
export function judgeDecode(
  out: PairOutput,
  opts: { engine: string; vocab: Vocabulary; maxScoreGap: number; droppedMs: number },
): { result: SttResult; details: PocketsphinxDetails } {
  const { main, mainStderr, garbage } = out;
  const hypothesis = main ? hypsegText(main) : '';
  const grammarMismatch = /Final result does not match the grammar/.test(mainStderr);
  const text = hypothesis ? normaliseText(hypothesis, 'en') : '';
  const intent = text && !grammarMismatch ? matchIntent(hypothesis, opts.vocab, 'en') : null;
  let scoreGap: number | undefined;
  if (main && garbage && main.frames > 0) scoreGap = (garbage.ascr - main.ascr) / main.frames;
  const details: PocketsphinxDetails = { hypothesis, grammarMismatch, scoreGap, frames: main?.frames ?? 0, droppedMs: opts.droppedMs };
  const maxGap = opts.maxScoreGap;
  const outOfGrammar = scoreGap !== undefined && scoreGap > maxGap;
  const rejected = !text || grammarMismatch || intent === null || outOfGrammar;
  const confidence = !text ? 0 : scoreGap === undefined ? (rejected ? 0.2 : 0.8) : 1 / (1 + Math.exp((scoreGap - maxGap) / 3));
  const result: SttResult = {
    text: rejected ? '' : text,
    confidence: Math.max(0, Math.min(1, confidence)),
    rejected,
    engine: opts.engine,
    ...(intent && !rejected ? { intent } : {}),
  };
  return { result, details };
}
