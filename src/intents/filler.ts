/**
 * The speech grammar's room for a name it does not have (issue 15 "Names":
 * "the grammar itself [must] leave room for unknown names (a filler path
 * that the decoder can take and that rejects)"). Where a template list is
 * marked `grammarFiller` (the `any_name` list of the free-name sentences),
 * the grammar offers, besides nothing else, a loop of the acoustic model's
 * phones as one-phone words (`ph_aa`, `ph_b`, ...: the same words as the
 * garbage decoder's, src/voice/stt/pocketsphinx-grammar.ts). "Turn on the
 * garden sprinkler" then decodes as "turn on the ph_g ph_aa ...", not as the
 * nearest name the home has, and the recogniser reports a name it did not
 * know (NAME_UNHEARD), which the box answers honestly and never acts on.
 *
 * Each phone of the loop costs `phoneProb` and entering it `entryProb`
 * (arc probabilities of the FSG, see fsg.ts): a real name of the home, which
 * its own words fit, stays cheaper than spelling it in phones.
 */

/** The phones of the en-us acoustic model (CMU set, no silence): the filler's and the garbage loop's words. */
export const MODEL_PHONES: readonly string[] = 'AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH'.split(' ');

/** The grammar word of one phone ("AA" -> "ph_aa"). */
export function phoneWord(phone: string): string {
  return `ph_${phone.toLowerCase()}`;
}

/** True for a one-phone filler word. */
export function isPhoneWord(word: string): boolean {
  return /^ph_[a-z]+$/.test(word);
}

/** Dictionary lines of the phone words ("ph_aa AA"). */
export function phoneDictionary(): string {
  return MODEL_PHONES.map((ph) => `${phoneWord(ph)} ${ph}\n`).join('');
}

/** What a list's spoken alternatives hold instead of words when the list is a filler (SlotResolver). */
export const FILLER_SLOT = '\u0000filler';

/** Slot a match gets when its name was spelt in phones by the filler (no words are known for it). */
export const NAME_UNHEARD = 'name_unheard';

/** The token a run of phone words becomes in a transcript before it is matched (one free-name word). */
export const UNHEARD_TOKEN = 'unheardname';

/**
 * Most phones a name may take in the filler (a long device name, "the
 * upstairs bathroom ceiling light", is about 25). Longer, it is no name but
 * speech the grammar does not cover, and the decode is rejected.
 */
export const MAX_NAME_PHONES = 30;

/**
 * Longest a name may take in the filler, ms (10 ms frames): a device name is
 * said in about a second; 2.5 s of phones is speech the grammar does not
 * cover (a real out-of-vocabulary recording decoded as "lock the ..." with
 * three seconds of phones), and the decode is rejected.
 */
export const MAX_NAME_MS = 2000;

/**
 * Fewest words of the sentence around an unheard name ("turn on the ...",
 * "lock the ..."); "open ..." alone is too little understood to say anything
 * about a device (a real out-of-vocabulary recording decoded so).
 */
export const MIN_CARRIER_WORDS = 2;

/** Filler arc probabilities (see module comment). */
export interface FillerWeights {
  /** Probability of entering the filler where a name could start. */
  entryProb: number;
  /** Probability of each phone of the filler. */
  phoneProb: number;
}

/**
 * Default weights, chosen on half of the synthesized confusion set
 * (test/voice-stt/unknown-names.test.ts, voices en-us and en-us+f3 tune,
 * en and en-gb-x-rp report).
 */
export const DEFAULT_FILLER_WEIGHTS: FillerWeights = { entryProb: 0.01, phoneProb: 1e-5 };

/**
 * A decoded word sequence with each run of phone words replaced by
 * UNHEARD_TOKEN; `unheard` tells whether there was any, `longestRun` the
 * most phones in one run.
 */
export function collapsePhoneWords(words: readonly string[]): { words: string[]; unheard: boolean; longestRun: number } {
  const out: string[] = [];
  let unheard = false;
  let run = 0;
  let longestRun = 0;
  for (const w of words) {
    if (!isPhoneWord(w)) {
      out.push(w);
      run = 0;
      continue;
    }
    longestRun = Math.max(longestRun, ++run);
    if (out.at(-1) !== UNHEARD_TOKEN) {
      out.push(UNHEARD_TOKEN);
      unheard = true;
    }
  }
  return { words: out, unheard, longestRun };
}
