/**
 * Near names: words a person may say in a device's name that sound like a
 * word of one of the home's names but are none ("den" for "bed"). The
 * grammar cannot list every name a home lacks (each decoy shifts the
 * decoder's prices: "bath lamp" took 3 of 4 right "desk lamp"s), so after a
 * decode that acts, each name word of the heard sentence that has rivals is
 * aligned once more on the same audio with its rivals in its place
 * (pocketsphinx-judge.ts oppositeSentences, one alignment with the rivals as
 * alternatives); when a rival fits clearly better than the heard word,
 * the command asks for a yes before it acts (pocketsphinx-judge.ts
 * NAME_RIVAL_MARGIN). Testers' "turn on the den light" switched on the Bed
 * Light 8 of 10 times, "the deck light" 5 of 10, "bench", "red" and "head
 * light" 2 of 2 each; of those only "red" is told apart this way (the
 * others fit "bed" as well as "bed" itself does, said fast).
 */

/**
 * Words of device and room names many homes have (rooms, furniture, places
 * around the house), the rivals' source. A word of the home's own names is
 * never a rival (it is in the grammar). Generic kind words (light, lamp,
 * door, ...) are left out: the distinctive word of a name is the one a near
 * name differs in.
 */
export const NEAR_NAME_WORDS_EN: readonly string[] = [
  'attic', 'back', 'bar', 'barn', 'basement', 'bath', 'bed', 'bench', 'bunk', 'cellar', 'closet', 'crib', 'deck', 'den',
  'desk', 'dock', 'front', 'garden', 'gate', 'guest', 'hall', 'head', 'hood', 'kid', 'kids', 'lawn', 'loft', 'mud', 'oven', 'pantry',
  'patio', 'play', 'pool', 'porch', 'red', 'shed', 'shelf', 'side', 'sink', 'stair', 'study', 'table', 'tub', 'wall', 'yard',
];

/**
 * Kind words of names (what the device is, not which one): they get no
 * rivals. A near name differs in its distinctive word ("den light" /
 * "bed light"), and aligning rivals of every "light" would only cost time.
 */
const KIND_WORDS = new Set([
  'light', 'lights', 'lamp', 'lamps', 'door', 'doors', 'fan', 'fans', 'lock', 'switch', 'tv', 'blind', 'blinds', 'shade',
  'shades', 'curtain', 'curtains', 'plug', 'speaker', 'sensor', 'thermostat', 'the', 'a', 'of', 'and',
]);

/** Whether `word` (lower case) is a kind word of names (KIND_WORDS: light, door, ...), not one that tells devices apart. */
export function isKindWord(word: string): boolean {
  return KIND_WORDS.has(word);
}

/** Name words with more phones than this get no rivals: long words are not confused for a near name by one sound. */
const MAX_PHONES = 4;
/** Most phones a rival may differ by (substituted, inserted or left out). */
const MAX_DISTANCE = 2;

/** Phone edit distance (Levenshtein over phone symbols). */
export function phoneDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The name words that may get rivals: of each of the home's names (its
 * words, lower case), the one word that is no kind word, when there is
 * exactly one ("bed" of "bed light", "office" of "office"); a name with two
 * such words ("party time", "mood lighting") is not made near by changing
 * one of them, and aligning them cost the real recordings' "run party time"
 * 80 ms.
 */
export function distinctiveNameWords(names: Iterable<readonly string[]>): string[] {
  const out = new Set<string>();
  for (const n of names) {
    const own = n.filter((w) => !KIND_WORDS.has(w));
    if (own.length === 1) out.add(own[0]!);
  }
  return [...out];
}

/**
 * The rivals of each word of `nameWords` (distinctiveNameWords; lower case):
 * words of `candidates` (NEAR_NAME_WORDS_EN) that are no word of the
 * home's names (`nameWords`) and whose first pronunciation in `phones`
 * differs from the name word's by one phone, or by at most MAX_DISTANCE
 * phones, fewer than the word has, with the same vowels (a three-phone
 * "bed" has "den", "deck", "head", "red", "bench", "shed"; not "bar" or
 * "kid"). Name words with more than MAX_PHONES phones, kind words and
 * words without a pronunciation get none. Result: name word -> rivals, only
 * words that have some.
 */
export function nameRivals(
  nameWords: Iterable<string>,
  phones: ReadonlyMap<string, readonly string[]>,
  candidates: readonly string[] = NEAR_NAME_WORDS_EN,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const own = new Set(nameWords);
  for (const w of own) {
    const mine = phones.get(w);
    if (KIND_WORDS.has(w) || !mine || mine.length > MAX_PHONES) continue;
    const rivals = candidates.filter((c) => {
      if (own.has(c)) return false;
      const theirs = phones.get(c);
      if (!theirs) return false;
      if (shorterPart(theirs, mine)) return false;
      const d = phoneDistance(mine, theirs);
      return d <= 1 || (d <= MAX_DISTANCE && d < mine.length && sameVowels(mine, theirs));
    });
    if (rivals.length) out[w] = rivals;
  }
  return out;
}

/**
 * Whether `a` is `b` with phones left out ("deck" in "desk"): said fast, the
 * longer word fits the shorter as well as itself, so such a rival cannot be
 * told apart (tune voices: right "turn on the desk lamp"s led "deck" by -2.6
 * to 0.9, against 1.4 and more for "bed light" over its rivals).
 */
function shorterPart(a: readonly string[], b: readonly string[]): boolean {
  if (a.length >= b.length) return false;
  let i = 0;
  for (const p of b) if (p === a[i]) i++;
  return i === a.length;
}

/** CMU dictionary vowels (Debian's cmudict-en-us.dict has no stress marks). */
const VOWELS = new Set(['AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'EH', 'ER', 'EY', 'IH', 'IY', 'OW', 'OY', 'UH', 'UW']);

/** Whether two pronunciations have the same vowels in the same order ("bed" and "den": EH; "bed" and "bar": no). */
function sameVowels(a: readonly string[], b: readonly string[]): boolean {
  const v = (p: readonly string[]): string => p.map((x) => x.replace(/\d$/, '')).filter((x) => VOWELS.has(x)).join(' ');
  return v(a) === v(b);
}

/** A pronouncing dictionary's text (`word PH PH`, `word(2) PH`) as word -> its first pronunciation's phones. */
export function firstPronunciations(dictText: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of dictText.split('\n')) {
    const [word, ...ph] = line.trim().split(/\s+/);
    if (!word || ph.length === 0 || /\(\d+\)$/.test(word) || out.has(word)) continue;
    out.set(word, ph);
  }
  return out;
}
