/**
 * Pronouncing dictionary for the command grammar: words come from the CMU
 * dictionary shipped with Debian's pocketsphinx-en-us
 * (/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict); a word missing
 * there (a product name like "EcoBee") gets a pronunciation generated from
 * espeak-ng's phonemes (`espeak-ng -v en-us -q -x WORD`, its ASCII phoneme
 * mnemonics, see espeak-ng docs/phonemes.md) mapped to the ARPAbet phones of
 * the CMU set. Nothing is written by hand.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { HomeAgentError } from '../../kernel/errors.js';

/** Where Debian 12's pocketsphinx-en-us puts the model. */
export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
/** The CMU pronouncing dictionary of that package. */
export const DEBIAN_CMUDICT = `${DEBIAN_MODEL_DIR}/cmudict-en-us.dict`;

/** A pronunciation cannot be produced (dictionary unreadable, espeak-ng missing or silent). */
export class PronunciationError extends HomeAgentError {
  constructor(code: 'DICT_UNREADABLE' | 'ESPEAK_UNAVAILABLE' | 'NO_PRONUNCIATION', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** word -> pronunciations (each a space-separated ARPAbet phone string). */
export type PronouncingDictionary = Map<string, string[]>;

/**
 * The pronunciations of `words` from a CMU-format dictionary ("word PH ON ES",
 * alternates as "word(2) ..."), lower-cased, alternates in file order. Only
 * the words asked for are kept: the whole CMU dictionary (135k words) as a
 * Map costs ~22 MB of heap for the life of the service and ~100 MB while it is
 * built, for a grammar that uses a few hundred words. Words the dictionary
 * lacks are absent from the result. Rejects with PronunciationError
 * DICT_UNREADABLE.
 */
export async function lookupPronunciations(words: Iterable<string>, file: string = DEBIAN_CMUDICT): Promise<PronouncingDictionary> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PronunciationError('DICT_UNREADABLE', `cannot read pronouncing dictionary ${file} (install pocketsphinx-en-us)`, { cause: err });
  }
  return pronunciationsIn(text, words);
}

/**
 * lookupPronunciations read synchronously (for a setting's check, which
 * runs inside `config set`). Throws PronunciationError DICT_UNREADABLE.
 */
export function lookupPronunciationsSync(words: Iterable<string>, file: string = DEBIAN_CMUDICT): PronouncingDictionary {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PronunciationError('DICT_UNREADABLE', `cannot read pronouncing dictionary ${file} (install pocketsphinx-en-us)`, { cause: err });
  }
  return pronunciationsIn(text, words);
}

/** The pronunciations of `words` in the text of a CMU-format dictionary (see lookupPronunciations). */
function pronunciationsIn(text: string, words: Iterable<string>): PronouncingDictionary {
  const wanted = new Set([...words].map((w) => w.toLowerCase()));
  const dict: PronouncingDictionary = new Map();
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const sp = text.indexOf(' ', start);
    if (sp > start && sp < end) {
      const word = text.slice(start, sp).replace(/\(\d+\)$/, '').toLowerCase();
      if (wanted.has(word)) {
        const phones = text.slice(sp + 1, end).replace(/#.*$/, '').trim();
        if (phones) {
          const list = dict.get(word);
          if (list) list.push(phones);
          else dict.set(word, [phones]);
        }
      }
    }
    start = end + 1;
  }
  return dict;
}

/**
 * espeak-ng ASCII phoneme mnemonics (English voices) -> ARPAbet. Longest
 * match first; stress marks and syllable/pause marks are dropped. Flaps
 * (t#, d#) become T/D, the glottal stop (?) of "button" becomes T, syllabic
 * consonants (n-, l-) carry a schwa as in the CMU dictionary.
 */
const ESPEAK_TO_ARPABET: Array<[string, string]> = (
  [
    ['aI@', 'AY ER'], ['aI3', 'AY ER'], ['aU@', 'AW ER'], ['aU3', 'AW ER'], ['i@3', 'IY R'],
    ['3:', 'ER'], ['@L', 'AH L'], ['@r', 'ER'], ['@2', 'AH'], ['@5', 'AH'], ['a#', 'AH'], ['A:', 'AA'], ['A@', 'AA R'],
    ['aI', 'AY'], ['aU', 'AW'], ['aa', 'AE'], ['e@', 'EH R'], ['eI', 'EY'], ['i:', 'IY'], ['i@', 'IY R'], ['I2', 'IH'],
    ['I#', 'IH'], ['O:', 'AO'], ['O@', 'AO R'], ['o@', 'AO R'], ['oU', 'OW'], ['OI', 'OY'], ['u:', 'UW'], ['U@', 'UH R'],
    ['tS', 'CH'], ['dZ', 'JH'], ['t#', 'T'], ['d#', 'D'], ['n-', 'AH N'], ['l-', 'AH L'], ['r-', 'R'], ['z/', 'Z'],
    ['@', 'AH'], ['3', 'ER'], ['a', 'AE'], ['A', 'AA'], ['E', 'EH'], ['e', 'EH'], ['i', 'IY'], ['I', 'IH'], ['O', 'AO'],
    ['0', 'AA'], ['o', 'OW'], ['u', 'UW'], ['U', 'UH'], ['V', 'AH'],
    ['p', 'P'], ['b', 'B'], ['t', 'T'], ['d', 'D'], ['k', 'K'], ['g', 'G'], ['f', 'F'], ['v', 'V'], ['T', 'TH'],
    ['D', 'DH'], ['s', 'S'], ['z', 'Z'], ['S', 'SH'], ['Z', 'ZH'], ['h', 'HH'], ['m', 'M'], ['n', 'N'], ['N', 'NG'],
    ['l', 'L'], ['r', 'R'], ['w', 'W'], ['j', 'Y'], ['x', 'K'], ['?', 'T'], ['W', 'W'],
  ] as Array<[string, string]>
).sort((a, b) => b[0].length - a[0].length);

/**
 * Map espeak-ng `-x` output (e.g. "'EkoUb,i:") to ARPAbet phones
 * (["EH","K","OW","B","IY"]). Unknown symbols are skipped.
 */
export function espeakToArpabet(espeak: string): string[] {
  const phones: string[] = [];
  let i = 0;
  while (i < espeak.length) {
    const hit = ESPEAK_TO_ARPABET.find(([sym]) => espeak.startsWith(sym, i));
    if (hit) {
      phones.push(...hit[1].split(' '));
      i += hit[0].length;
    } else {
      // Stress (' , =), pause (_), length (:), palatalisation (;), separators: no phone.
      i += 1;
    }
  }
  return phones;
}

/** Run espeak-ng and return its ASCII phonemes for `text`. Rejects with PronunciationError ESPEAK_UNAVAILABLE. */
export function espeakPhonemes(text: string, opts: { binary?: string; voice?: string } = {}): Promise<string> {
  const bin = opts.binary ?? 'espeak-ng';
  return new Promise((resolve, reject) => {
    execFile(bin, ['-v', opts.voice ?? 'en-us', '-q', '-x', text], { timeout: 10_000 }, (err, stdout) => {
      if (err) {
        reject(new PronunciationError('ESPEAK_UNAVAILABLE', `espeak-ng failed for "${text}" (install the Debian package espeak-ng): ${err.message}`, { cause: err }));
      } else resolve(stdout.trim());
    });
  });
}

/**
 * Generated ARPAbet pronunciation of one word (lower case) from espeak-ng.
 * Rejects with PronunciationError (ESPEAK_UNAVAILABLE, NO_PRONUNCIATION).
 */
export async function generatePronunciation(word: string, opts: { binary?: string; voice?: string } = {}): Promise<string> {
  const phones = espeakToArpabet(await espeakPhonemes(word, opts));
  if (phones.length === 0) throw new PronunciationError('NO_PRONUNCIATION', `espeak-ng gave no phonemes for "${word}"`);
  return phones.join(' ');
}

/** Result of writing a grammar's dictionary. */
export interface DictionaryReport {
  /** Words that were not in the CMU dictionary, with their generated phones. */
  generated: Record<string, string>;
  /** Number of lines written. */
  entries: number;
}

/**
 * Voices whose espeak-ng pronunciation of a name word is added as an
 * alternate when the dictionary has no such one (issue 15): the CMU
 * dictionary is American, and a British "garage" (G AE R IH JH) was heard as
 * a name the home lacks on the tune voices of test/bench/voice-synth.ts
 * (en-gb-scotland, en-029), as on the report voices.
 */
export const ACCENT_VOICES: readonly string[] = ['en-gb'];

/**
 * Write a dictionary subset for `words` to `file` (CMU format, alternates as
 * "word(2)"): dictionary pronunciations where they exist, espeak-ng-generated
 * ones otherwise; each word of `accentWords` (the home's names) also gets the
 * pronunciation of every voice of `accents` (default ACCENT_VOICES) that is
 * not already among its own. Rejects with PronunciationError.
 */
export async function writeDictionary(
  words: string[],
  file: string,
  opts: { dictionary?: string; espeakBinary?: string; accentWords?: readonly string[]; accents?: readonly string[] } = {},
): Promise<DictionaryReport> {
  const dict = await lookupPronunciations(words, opts.dictionary);
  const lines: string[] = [];
  const generated: Record<string, string> = {};
  const missing = words.filter((w) => !dict.has(w));
  const made = await Promise.all(missing.map((w) => generatePronunciation(w, { binary: opts.espeakBinary })));
  missing.forEach((w, i) => (generated[w] = made[i]!));
  const inGrammar = new Set(words);
  const accentWords = [...new Set(opts.accentWords ?? [])].filter((w) => inGrammar.has(w));
  const accents = opts.accents ?? ACCENT_VOICES;
  const byWord = await Promise.all(accentWords.map((w) => Promise.all(accents.map((voice) => generatePronunciation(w, { binary: opts.espeakBinary, voice })))));
  const accented = new Map(accentWords.map((w, i) => [w, byWord[i]!] as const));
  for (const w of [...new Set(words)].sort()) {
    const prons = [...(dict.get(w) ?? [generated[w]!])];
    for (const p of accented.get(w) ?? []) if (!prons.includes(p)) prons.push(p);
    prons.forEach((p, i) => lines.push(`${i === 0 ? w : `${w}(${i + 1})`} ${p}`));
  }
  await writeFile(file, `${lines.join('\n')}\n`);
  return { generated, entries: lines.length };
}
