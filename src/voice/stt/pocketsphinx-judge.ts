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
 * matches, is a rejection too. So is speech whose length does not fit the
 * matched sentence, a word placed where the audio holds no speech, or
 * audio cut while speech went on (pocketsphinx-duration.ts).
 */
import { matchIntent, normaliseText } from '../../intents/index.js';
import type { IntentMatch, Vocabulary } from '../../intents/types.js';
import { MAX_NAME_MS, MAX_NAME_PHONES, MIN_CARRIER_WORDS, NAME_UNHEARD, UNHEARD_TOKEN, collapsePhoneWords, isPhoneWord } from '../../intents/filler.js';
import { hypsegText, isFiller, type HypsegUtterance } from './pocketsphinx-log.js';
import { NAME_FREE } from '../../intents/templates-en.js';
import type { PairOutput } from './pocketsphinx-decoder.js';
import type { SttResult } from './types.js';
import type { SentenceStanding } from './fsg-walk.js';
import { LEADING_WORDS } from '../../intents/fsg.js';
import { durationMisfit, sentencePhones, wordsInSilence, type DurationLimits, type DurationMisfit, type SpeechExtent } from './pocketsphinx-duration.js';

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
  /** Where speech is in the decoded audio (pocketsphinx-duration.ts); undefined when not measured. */
  extent?: SpeechExtent;
  /** Phones of the hypothesis' words in the grammar's dictionary. */
  phones?: number;
  /** extent.speechMs / phones. */
  msPerPhone?: number;
  /** Why the length does not fit (the result is then rejected); undefined when it fits or was not checked. */
  durationMisfit?: DurationMisfit;
  /** Where the hypothesis stands in the grammar (fsg-walk.ts); undefined when not checked. */
  standing?: SentenceStanding;
}

/**
 * How far inside the rejection threshold (DEFAULT_MAX_SCORE_GAP, score
 * units per frame) a speculative decode must be to be acted on at the first
 * pause (issue 15 "clearly ahead ... of the rejection path").
 */
export const EARLY_COMMIT_MARGIN = 4;

/** Words that open an area qualifier after a device's name ("turn on the standing light in the living room"). */
const AREA_QUALIFIER_WORDS = new Set(['in', 'on']);

/**
 * Whether a speculative decode (the first pause's final pass) may be acted
 * on at once instead of after the full silence (issue 15 "Grammar-aware
 * endpointing"): accepted, an intent matched, a complete sentence of the
 * grammar, no name the filler spelt in phones, and its score
 * EARLY_COMMIT_MARGIN inside the rejection threshold; and no longer
 * sentence extends it to another meaning. A word that may follow is
 * harmless when (a) it opens an area qualifier ("… in the office") after a
 * name exactly one device of `vocab` has, which cannot change the device
 * meant, or (b) with `walk` (where words stand in the same grammar), the
 * sentence with it is complete and means the same command — the same
 * intent and slots — and is itself extended only by such words (two words
 * deep): "run party time" → "… scene", "… to eighty percent" →
 * "… brightness". Anything else waits for the full silence as before
 * ("turn off the lights" may go on "… in the office"; "what's the
 * temperature" may go on "… in the bedroom"; "next" may go on "… on the
 * tv").
 */
export function earlyCommittable(result: SttResult, details: PocketsphinxDetails, maxScoreGap: number, vocab?: Vocabulary, margin = EARLY_COMMIT_MARGIN, walk?: (words: readonly string[]) => SentenceStanding): boolean {
  const st = details.standing;
  if (result.rejected || !result.intent || !st || !st.complete) return false;
  if (details.hypothesis.split(' ').some((w) => isPhoneWord(w))) return false;
  if (!(details.scoreGap !== undefined && details.scoreGap <= maxScoreGap - margin)) return false;
  if (!st.continuable) return true;
  const intent = result.intent;
  if (st.next.every((w) => AREA_QUALIFIER_WORDS.has(w)) && namesOneDevice(intent, vocab)) return true;
  if (!walk || !vocab) return false;
  const words = details.hypothesis.split(' ').filter((w) => w && !isFiller(w)).map((w) => w.replace(/\(\d+\)$/, ''));
  // The walk sees the words as decoded; the matcher, like judgeDecode, without a leading "and"/"then".
  const lead = words.length > 1 && LEADING_WORDS.includes(words[0]!) ? 1 : 0;
  return extendedOnlyToTheSame(words, lead, st, intent, vocab, walk, LOOKAHEAD_DEPTH);
}

/** How many words past a complete sentence the early commit looks for a change of meaning. */
const LOOKAHEAD_DEPTH = 2;
/** More words than this may follow: a slot (a number, a name) goes on, which changes the meaning; not looked at one by one. */
const LOOKAHEAD_MAX_NEXT = 12;

/** Every word that may follow `words` (standing `st`) leads to a complete sentence with `intent`'s meaning, within `depth` words. */
function extendedOnlyToTheSame(words: string[], lead: number, st: SentenceStanding, intent: IntentMatch, vocab: Vocabulary, walk: (words: readonly string[]) => SentenceStanding, depth: number): boolean {
  if (depth <= 0 || st.next.length > LOOKAHEAD_MAX_NEXT) return false;
  return st.next.every((w) => {
    const longer = [...words, w];
    const ls = walk(longer);
    if (!ls.complete) return false;
    const m = matchIntent(longer.slice(lead).join(' '), vocab, 'en');
    if (!m || !sameMeaning(m, intent)) return false;
    return !ls.continuable || extendedOnlyToTheSame(longer, lead, ls, intent, vocab, walk, depth - 1);
  });
}

/** The same intent with the same slot values (key order ignored). */
function sameMeaning(a: IntentMatch, b: IntentMatch): boolean {
  if (a.intent !== b.intent) return false;
  const ka = Object.keys(a.slots).sort();
  const kb = Object.keys(b.slots).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && JSON.stringify(a.slots[k]) === JSON.stringify(b.slots[k]));
}

/** The match names a device by a name (or alias) exactly one device of `vocab` has, with no area or kind word of its own. */
function namesOneDevice(m: IntentMatch, vocab: Vocabulary | undefined): boolean {
  const name = m.slots.name?.toLowerCase();
  if (!vocab || !name || m.slots.area !== undefined || m.slots.device !== undefined) return false;
  const owners = vocab.entities.filter((e) => [e.name, ...(e.aliases ?? [])].some((n) => n.toLowerCase() === name));
  return owners.length === 1;
}

/**
 * Duration of the longest run of the filler's phone words in a grammar path,
 * ms (10 ms frames); silences and noises the decoder put between them
 * (`<sil>`, `[NOISE]`) belong to the run.
 */
function longestPhoneRunMs(u: HypsegUtterance): number {
  let longest = 0;
  let runStart: number | undefined;
  u.words.forEach((w, i) => {
    if (isFiller(w.word) && runStart !== undefined) return;
    if (!isPhoneWord(w.word)) {
      runStart = undefined;
      return;
    }
    runStart ??= w.start;
    const end = u.words[i + 1]?.start ?? u.frames;
    longest = Math.max(longest, (end - runStart) * 10);
  });
  return longest;
}

/**
 * A match whose free name was the filler's unheard word: the name slot
 * becomes NAME_UNHEARD (no words are known for it; local-intents.ts answers
 * that it knows no such device). Null when the unheard word stands anywhere
 * else than a free name (the decode is then rejected).
 */
function unheardName(m: IntentMatch): IntentMatch | null {
  const { name, ...slots } = m.slots;
  if (name !== UNHEARD_TOKEN || slots[NAME_FREE] === undefined) return null;
  return { ...m, slots: { ...slots, [NAME_UNHEARD]: 1 }, text: m.text.replaceAll(UNHEARD_TOKEN, '…') };
}

/**
 * Whether words the decoder placed in the silence around the speech
 * (wordsInSilence) carry part of `intent`: the sentence without them does
 * not mean the same command. "turn all of lights in the office to two" with
 * "to two" made from the room noise after the last word is no command
 * without it (rejected); "resume the" with a "the" made from noise still
 * means "resume" (kept).
 */
function meaningRestsOnSilence(main: HypsegUtterance, extent: SpeechExtent, intent: IntentMatch, vocab: Vocabulary): boolean {
  const silent = new Set(wordsInSilence(main.words.map((w) => ({ start: w.start, filler: isFiller(w.word) })), main.frames, extent));
  if (silent.size === 0) return false;
  const rest = main.words.filter((w, i) => !silent.has(i) && !isFiller(w.word)).map((w) => w.word.replace(/\(\d+\)$/, ''));
  if (rest.some((w) => isPhoneWord(w))) return true;
  const words = rest.length > 1 && LEADING_WORDS.includes(rest[0]!) ? rest.slice(1) : rest;
  const m = words.length > 0 ? matchIntent(words.join(' '), vocab, 'en') : null;
  return !m || !sameMeaning(m, intent);
}

/**
 * Turn a pair's output into an SttResult for engine `engine`: `vocab` is the
 * vocabulary the grammar was built from, `maxScoreGap` the rejection
 * threshold, `droppedMs` what the audio clean-up cut from the start.
 * With `extent` (the decoded audio's speech extent), `phones` (the grammar
 * dictionary's phone counts) and `durationLimits`, a hypothesis whose speech
 * length does not fit its words, or audio that was cut, is rejected too
 * (pocketsphinx-duration.ts); `durationLimits: false` turns that check off.
 * Confidence: 1 well inside the threshold, 0.5 at it, towards 0 beyond it.
 */
export function judgeDecode(
  out: PairOutput,
  opts: {
    engine: string;
    vocab: Vocabulary;
    maxScoreGap: number;
    droppedMs: number;
    extent?: SpeechExtent;
    phones?: ReadonlyMap<string, number>;
    durationLimits?: DurationLimits | false;
    /** Where decoded words stand in the grammar (fsg-walk.ts `standing` over its command.fsg). */
    standing?: (words: readonly string[]) => SentenceStanding;
  },
): { result: SttResult; details: PocketsphinxDetails } {
  const { main, mainStderr, garbage } = out;
  const hypothesis = main ? hypsegText(main) : '';
  const grammarMismatch = /Final result does not match the grammar/.test(mainStderr);
  // A name spelt in phones by the grammar's filler (filler.ts) is one unheard word for the matcher.
  const collapsed = collapsePhoneWords(hypothesis.split(' ').filter(Boolean));
  const { unheard, longestRun } = collapsed;
  // A leading "and"/"then" (the second of two commands in one breath) is not part of the command.
  const words = collapsed.words.length > 1 && LEADING_WORDS.includes(collapsed.words[0]!.replace(/\(\d+\)$/, '')) ? collapsed.words.slice(1) : collapsed.words;
  const heard = words.join(' ');
  const text = heard ? normaliseText(heard, 'en').replaceAll(UNHEARD_TOKEN, '…') : '';
  const matched = text && !grammarMismatch ? matchIntent(heard, opts.vocab, 'en') : null;
  // More phones than a name takes, or a filler with less than two words of a sentence around it ("open ...":
  // short speech the grammar does not cover, absorbed by the filler) is too little understood: rejected.
  const nameFits = longestRun <= MAX_NAME_PHONES && (main ? longestPhoneRunMs(main) : 0) <= MAX_NAME_MS && words.length - 1 >= MIN_CARRIER_WORDS;
  const intent = matched && unheard ? (nameFits ? unheardName(matched) : null) : matched;
  let scoreGap: number | undefined;
  if (main && garbage && main.frames > 0) scoreGap = (garbage.ascr - main.ascr) / main.frames;
  const details: PocketsphinxDetails = { hypothesis, grammarMismatch, scoreGap, frames: main?.frames ?? 0, droppedMs: opts.droppedMs };
  if (opts.standing && hypothesis) details.standing = opts.standing(hypothesis.split(' ').filter(Boolean));
  if (opts.extent && opts.phones) {
    const phones = sentencePhones(hypothesis.split(' ').filter(Boolean), opts.phones);
    details.extent = opts.extent;
    details.phones = phones;
    if (phones > 0) details.msPerPhone = opts.extent.speechMs / phones;
    if (text && opts.durationLimits !== false) {
      details.durationMisfit = durationMisfit(opts.extent, phones, opts.durationLimits);
      if (!details.durationMisfit && main && intent && meaningRestsOnSilence(main, opts.extent, intent, opts.vocab)) details.durationMisfit = 'word_in_silence';
    }
  }
  const maxGap = opts.maxScoreGap;
  const outOfGrammar = scoreGap !== undefined && scoreGap > maxGap;
  const rejected = !text || grammarMismatch || intent === null || outOfGrammar || details.durationMisfit !== undefined;
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
