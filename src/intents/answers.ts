/**
 * Spoken answers to a yes/no question (a risky action's confirmation, src/home/confirm.ts):
 * the English phrases the confirmation gate takes, and the answer grammar that lets
 * the offline recogniser hear them. The command grammar has no "yes" or "no" (a
 * spoken "yes" came out as "the eggs one" and was rejected, so a risky command could
 * only be confirmed by typing); while a question waits, the voice pipeline decodes
 * the answer with this grammar instead (SttStartOptions.answer).
 */

/** English phrases that answer yes (lower case, words as the speech dictionary spells them). */
export const YES_PHRASES_EN: readonly string[] = ['yes', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'confirm', 'confirmed', 'do it', 'go ahead', 'please do', 'yes please', 'affirmative', 'correct', 'of course'];

/** English phrases that answer no. */
export const NO_PHRASES_EN: readonly string[] = ['no', 'nope', 'nah', "don't", 'dont', 'do not', 'cancel', 'stop', 'never mind', 'nevermind', 'no thanks', 'negative', 'abort', 'not now', 'not yet', 'not sure', 'unsure', "i'm not sure"];

/**
 * The phrases the answer grammar offers (a subset of the above). Left out,
 * measured on espeak-ng voices in room noise (test/bench/voice-answers.ts):
 * "do it", heard for a spoken "no", "nope" and "note" (a no taken for a yes);
 * "go ahead", "yes please", "correct", "please do", "affirmative", which
 * "pause", "what", "hello there", "yesterday", "next track" and "maybe later"
 * were forced into (a yes nobody said); "okay" and "yep", which share the
 * vowel or the end of "no" and "nope" (a tester's en-029 "nope" at 137 words
 * a minute was heard as "okay" and unlocked the door); and "nah", "abort",
 * "negative", "do not", "please"/"thanks" after a phrase, which took other
 * short speech. A false yes confirms a risky action, a false no only drops
 * it: the yes phrases are the fewest. Typed, every phrase above still
 * answers. "unsure" is a no here: a tester's "unsure" was heard as "sure"
 * 3 times of 11 (a refusal taken for a yes); on the tune voices of
 * test/bench/voice-answers.ts (4 rates, room noise, pink noise, echo) 11
 * of 48 before, none with it ("sure" heard about as often: 16 of 32 -> 16).
 * "not yet" and "not sure" are no spoken phrases: never heard as a yes
 * without them, and one more two-word phrase pushed a "no thanks" over
 * ANSWER_MAX_SCORE_GAP. "sure" is no spoken answer but a decoy (heard, it
 * is asked again): a tester's "shore", "sir" and "share" were heard as
 * "sure" and unlocked the door (4 of 9), and a yes that ends in a vowel has
 * no ending to tell it by (src/voice/stt/ending.ts); on the tune voices
 * "sure", "shore", "sir", "share" were a yes 8, 12, 2, 0 times of 16 in room
 * noise, none now ("sir" 2 a no, "unsure").
 */
export const SPOKEN_ANSWERS_EN: readonly string[] = ['yes', 'yeah', 'no', 'nope', 'no thanks', 'cancel', 'stop', "don't", 'never mind', 'not now', 'unsure'];

/**
 * Decoys: words that sound like a yes but are none, in the answer grammar
 * beside the answers, so that the decoder has somewhere to put them; a decoy
 * heard is no answer (spokenAnswer gives undefined), and the box asks for a
 * yes or no again. A tester's espeak-ng "chess" and "I guess" (in noise)
 * were heard as "yes" and confirmed an unlock. Chosen on the tune voices of
 * test/bench/voice-answers.ts (its traps now hold "Jess", "chess",
 * "I guess", "bless you", "less"): with no decoys 8.0 % of all utterances
 * were a false yes and 87.5 % of answers were heard right; with these four,
 * 2.7 % and 82.5 % (a "yeah" and a "yep" of en-029 lost); with twelve
 * (these and "jess", "less", "mess", "dress", "yet", "yell", "year",
 * "shore"), 2.1 % and 60 %: they took real answers. "Jess" is heard as "yes"
 * with or without a "jess" decoy: to this acoustic model the two are one
 * word. "next": the fixture recording "next" (a person, not espeak-ng),
 * said while a question waited, was heard as "yes" ahead of the phone loop
 * and confirmed it; with the decoy the tune figures are unchanged ("pause"
 * and "resume" as decoys too cost 7.5 points of answers heard right). None
 * for "no": a decoy such as "know" would take real no's, and a false no only
 * drops the action. Then a tester's words under the unlock question, heard
 * as "yes" and confirming it: "yet", "is it", "this", "yesterday", "Jess",
 * "yellow" (heard "yeah"), the letter "s", "mess" (8 voices, 130 to 220
 * words a minute). On the tune voices at those rates (4 rates, 2 noise
 * seeds; 10 answers and 13 such traps, each 32 times) 112 of 416 traps
 * were a yes with the five decoys above, and 246 of 320 answers right;
 * with "this", "is it", "yesterday", "mess" and "yellow" too, 53 and 226
 * (the answers lost: "yep" and "okay", no spoken answers, heard as "yellow"
 * and "is it", and 2 "cancel"s, a no, heard as "is it"); on the bench's
 * own tune renderings 29 of 40 answers right (33 before: a "no thanks", a
 * "cancel", a "sure" and a "never mind" now score just over
 * ANSWER_MAX_SCORE_GAP and are asked again), its report voices 87.5 % as
 * before, and none of the new traps but "yet" a yes. "yet" as a decoy
 * as well took 28 of 32 "yeah"s (176 answers right), so it is not one: a
 * lone "yet" is heard as "yes" (27 of 32), and aligning "yet" against a
 * heard "yes" does not tell them apart (real "yes"es scored as low against
 * it as "yet"s did). How the audio ends does (src/voice/stt/ending.ts,
 * pocketsphinx-judge.ts YES_MIN_HISS_MS): "yet" 27 -> 0 of 32.
 */
export const ANSWER_DECOYS_EN: readonly string[] = ['sure', 'chess', 'guess', 'i guess', 'bless', 'next', 'this', 'is it', 'yesterday', 'mess', 'yellow'];

/** The answer grammar's phrases as word lists: the answers (SPOKEN_ANSWERS_EN), then the decoys (ANSWER_DECOYS_EN). */
export function answerSentences(): string[][] {
  return [...SPOKEN_ANSWERS_EN, ...ANSWER_DECOYS_EN].map((p) => p.split(' '));
}

/**
 * The answer grammar as a Sphinx FSG (the format of fsg.ts): from the start
 * state, each phrase of answerSentences() (answers and decoys) as a chain of
 * words to the one final state, every phrase equally likely.
 */
export function answerFsg(): string {
  const sentences = answerSentences();
  const transitions: string[] = [];
  let states = 2; // 0 start, 1 final
  const p = 1 / sentences.length;
  for (const words of sentences) {
    let from = 0;
    words.forEach((w, i) => {
      const last = i === words.length - 1;
      const to = last ? 1 : states++;
      transitions.push(`TRANSITION ${from} ${to} ${i === 0 ? p.toPrecision(6) : '1.0'} ${w}`);
      from = to;
    });
  }
  return ['FSG_BEGIN answer', `NUM_STATES ${states}`, 'START_STATE 0', 'FINAL_STATE 1', ...transitions, 'FSG_END', ''].join('\n');
}

/** Every word of the answer grammar, for the pronouncing dictionary. */
export function answerWords(): string[] {
  return [...new Set(answerSentences().flat())].sort();
}

/**
 * What `text` means as an answer (YES_PHRASES_EN, NO_PHRASES_EN, with a
 * "please" or "thanks" after it): true yes, false no, undefined neither.
 */
export function answerMeaning(text: string): boolean | undefined {
  const words = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const core = (words.at(-1) === 'please' || words.at(-1) === 'thanks') && words.length > 1 ? words.slice(0, -1) : words;
  const phrase = core.join(' ');
  if (YES_PHRASES_EN.includes(phrase)) return true;
  if (NO_PHRASES_EN.includes(phrase)) return false;
  return undefined;
}

/**
 * Whether `text` (a recogniser's words) is one of the answer grammar's
 * answers (SPOKEN_ANSWERS_EN): true for yes, false for no, undefined for
 * neither (a decoy; "sure" is one: heard, it is asked again).
 */
export function spokenAnswer(text: string): boolean | undefined {
  const phrase = text.trim().toLowerCase().split(/\s+/).filter(Boolean).join(' ');
  return SPOKEN_ANSWERS_EN.includes(phrase) ? answerMeaning(phrase) : undefined;
}
