/**
 * The speech grammar: the English templates (the same ones the matcher
 * uses) filled with the vocabulary's names, rooms and spoken numbers, written
 * as JSGF (Java Speech Grammar Format 1.0, as read by pocketsphinx -jsgf).
 * A template whose slot list is empty (no lock in the home) is left out, so
 * the grammar only offers sentences the home can answer. Digits are written
 * as words ("50" -> "fifty"); a recognised transcript goes back through the
 * matcher, which turns them into digits again.
 */
import type { Vocabulary } from './types.js';
import { numberToWords } from './numbers.js';
import { tokenise } from './normalise.js';
import { compiledTemplates, type CompiledTemplates } from './matcher.js';
import type { NameRequirement, TemplateNode } from './template-syntax.js';
import { HomeAgentError } from '../kernel/errors.js';
import { partOfAName } from '../home/resolve.js';
import { DEFAULT_JOINT_PROB, DEFAULT_NOT_COMMAND_PROB, LEADING_WORDS, NOT_COMMAND_LEADS_EN, buildFsg, correctionWords } from './fsg.js';
import { DEFAULT_FILLER_WEIGHTS, FILLER_SLOT, MODEL_PHONES, phoneWord, type FillerWeights } from './filler.js';
import { areaEntries, listNameEntries, nameEntries, requirementKey, templateListEntries, type SlotEntry } from './slot-lists.js';
import { COMMON_DEVICES_EN, COMMON_ROOMS_EN } from './builtin-lists.js';

/** A compiled speech grammar. */
export interface SpeechGrammar {
  /** JSGF text with one public rule <command>. */
  jsgf: string;
  /** The same grammar as an epsilon-free Sphinx FSG (what PocketsphinxStt loads, see fsg.ts). */
  fsg: string;
  /**
   * The continuation grammar: the same sentences, each optionally opening
   * with "and" or "then" (LEADING_WORDS), for the utterance heard right
   * after one acted on at its pause (issue 15).
   */
  continuationFsg: string;
  /**
   * The compound grammar: the command grammar with a joint ("and", "then")
   * from the end of every sentence back to its start, for telling two
   * commands said in one breath (fsg.ts DEFAULT_JOINT_PROB).
   */
  compoundFsg: string;
  /** Every word the grammar can produce, sorted, for the pronouncing dictionary. */
  words: string[];
}

/** The grammar cannot be built (no sentence survives, e.g. every list is empty and no fixed sentence exists). */
export class GrammarError extends HomeAgentError {
  constructor(message: string) {
    super('GRAMMAR_EMPTY', message);
  }
}

const SPEAKABLE = /^[a-z0-9']+$/;

/** Largest number numberToWords speaks (numbers.ts). */
const MAX_SPOKEN_NUMBER = 999_999;

/**
 * Words of one normalised token for a grammar ("50" -> ["fifty"]); null when it cannot be spoken in English (a
 * number past MAX_SPOKEN_NUMBER too: a breaking tester's device named "1234567890" failed every grammar build, and
 * voice with it, where its name alone should have been left out).
 */
function tokenWords(token: string): string[] | null {
  if (/^\d+(\.\d+)?$/.test(token)) return Number(token) <= MAX_SPOKEN_NUMBER ? numberToWords(Number(token)).split(' ') : null;
  return SPEAKABLE.test(token) ? [token] : null;
}

function entryWords(e: SlotEntry): string | null {
  const words: string[] = [];
  for (const t of e.tokens) {
    const w = tokenWords(t);
    if (!w) return null;
    words.push(...w);
  }
  return words.length > 0 ? words.join(' ') : null;
}

/** True when `node` (following rules) has a {name} slot, whose expansion depends on the group. */
function usesName(node: TemplateNode, rules: Map<string, TemplateNode>, seen: Set<string> = new Set()): boolean {
  switch (node.kind) {
    case 'slot':
      return node.list === 'name';
    case 'seq':
      return node.items.some((n) => usesName(n, rules, seen));
    case 'alt':
      return node.options.some((n) => usesName(n, rules, seen));
    case 'rule': {
      if (seen.has(node.name)) return false;
      seen.add(node.name);
      const body = rules.get(node.name);
      return body !== undefined && usesName(body, rules, seen);
    }
    default:
      return false;
  }
}

function ruleName(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Spoken forms of the integers min..max ("twenty one"). */
export function rangeAlternatives(min: number, max: number): string[] {
  const alts: string[] = [];
  for (let i = min; i <= max; i++) alts.push(numberToWords(i));
  return alts;
}

/** Words a part of a name is never made of alone. */
const PARTIAL_NAME_STOP_WORDS = new Set(['the', 'a', 'an', 'of', 'and', 'in', 'on', 'to', 'my', 'our']);

/**
 * Nouns of a device's kind, never a part of a name on their own: a name the
 * home lacks mostly ends in one ("the back door", "the garden lamp"), and
 * with the bare noun in the grammar the decoder dropped the word it did not
 * know and placed the rest on the home's one door (a newcomer's "unlock the
 * back door" became "unlock the door": the Front Door, after a yes). The
 * templates' kind lists (domain_words, cover_words) and the kinds they lack.
 */
function kindNouns(c: CompiledTemplates): Set<string> {
  const out = new Set(['door', 'doors', 'gate', 'window', 'windows', 'lock', 'sensor', 'plug', 'socket', 'heater', 'thermostat', 'speaker', 'tv', 'valve', 'blind', 'curtain', 'shutter', 'light', 'lights']);
  for (const name of ['domain_words', 'cover_words']) {
    const l = c.set.lists[name];
    if (l) for (const e of templateListEntries(l, 'en')) for (const t of e.tokens) out.add(t);
  }
  return out;
}

/**
 * Parts of the home's names for the grammar's free-name sentences (issue 15
 * "Names": "the standing" for the Standing Light): every run of consecutive
 * words of a multi-word name or alias, shorter than it, that is not only
 * small words, no kind noun alone (kindNouns), no room's name and no
 * device's whole name, and that fits exactly one device by the resolver's rule (src/home/resolve.ts
 * partOfAName). The text matcher marks such a match `name_free` and the
 * resolver places it, as it does typed text. Without these the decoder
 * forced a part of a name into the nearest whole sentence ("turn off the
 * standing" heard as "turn office fan pink"). A part several devices share
 * ("door") is left out: said alone it would be one device only by the
 * command's kind ("unlock the door": the one lock), so "unlock the back
 * door", a door the home lacks, could be heard as it and open the front
 * door; typed, such a part still asks which.
 */
export function partialNameAlternatives(vocab: Vocabulary): string[] {
  const kinds = kindNouns(compiledTemplates('en'));
  const whole = new Set(nameEntries(vocab, undefined, 'en').map((e) => e.tokens.join(' ')));
  const areas = new Set(areaEntries(vocab, 'en').map((e) => e.tokens.join(' ')));
  const out = new Set<string>();
  for (const e of nameEntries(vocab, undefined, 'en')) {
    const t = e.tokens;
    for (let len = 1; len < t.length; len++) {
      for (let i = 0; i + len <= t.length; i++) {
        const part = t.slice(i, i + len);
        const key = part.join(' ');
        if (part.every((w) => PARTIAL_NAME_STOP_WORDS.has(w)) || (len === 1 && kinds.has(key)) || whole.has(key) || areas.has(key)) continue;
        if (vocab.entities.filter((v) => partOfAName([v.name, ...(v.aliases ?? [])], key)).length !== 1) continue;
        const words = entryWords({ tokens: part, out: key });
        if (words) out.add(words);
      }
    }
  }
  return [...out].sort();
}

/**
 * Spoken alternatives of a slot list for the grammar: vocabulary names
 * (restricted by `requires`), rooms, list names, a template list, or a
 * wildcard list's grammar values, or FILLER_SLOT and the parts of the home's names for a filler list
 * (neither when `filler` is false).
 * Empty when nothing can be said there.
 */
export function slotAlternatives(c: CompiledTemplates, vocab: Vocabulary, listName: string, requires: NameRequirement | undefined, filler = true): string[] {
  let entries: SlotEntry[];
  if (listName === 'name') entries = nameEntries(vocab, requires, 'en');
  else if (listName === 'area') {
    // With the filler (names the home lacks have a path), the common rooms the home lacks too (COMMON_ROOMS_EN).
    const own = areaEntries(vocab, 'en');
    const has = new Set(own.map((e) => e.tokens.join(' ')));
    entries = [...own, ...(filler ? COMMON_ROOMS_EN.filter((r) => !has.has(r)).map((r) => ({ tokens: r.split(' '), out: r })) : [])];
  }
  else if (listName === 'list') entries = listNameEntries(vocab, 'en');
  else {
    const l = c.set.lists[listName];
    if (!l) return [];
    if (l.grammarFiller) {
      if (!filler) return [];
      // The home's whole names with one of the list's words (grammarNamesWith): "close the front door" (a lock) is
      // heard as said, and the resolver says what that device can do.
      const withWords = new Set(l.grammarNamesWith ?? []);
      const named = withWords.size ? nameEntries(vocab, undefined, 'en').filter((e) => e.tokens.some((t) => withWords.has(t))).map(entryWords).filter((w): w is string => w !== null) : [];
      // Common devices the home lacks (COMMON_DEVICES_EN): heard as said, answered as no such device.
      const lacks = COMMON_DEVICES_EN.filter((d) => !vocab.entities.some((v) => partOfAName([v.name, ...(v.aliases ?? [])], d))).map((d) => entryWords({ tokens: d.split(' '), out: d }));
      return [FILLER_SLOT, ...partialNameAlternatives(vocab), ...named, ...lacks.filter((w): w is string => w !== null)];
    }
    entries = l.wildcard ? (l.grammarValues ?? []).map((v) => ({ tokens: tokenise(v, 'en'), out: v })) : templateListEntries(l, 'en');
  }
  return [...new Set(entries.map(entryWords).filter((w): w is string => w !== null))];
}

/**
 * Build the command grammar (JSGF text and the equivalent FSG) and its word list from the English
 * templates and `vocab`; `weights` price the filler path for unknown names (filler.ts), null leaves
 * the filler out (the sentences that need it with it; for comparison in benchmarks); `jointProb` is the compound
 * grammar's probability of a second command after a whole sentence (fsg.ts DEFAULT_JOINT_PROB); `notCommandProb`
 * the probability of an opening that makes the sentence no command ("don't ...", fsg.ts NOT_COMMAND_LEADS_EN;
 * 0: none). Names that are not English words (Chinese names) are left out of the grammar; the text matcher still knows them.
 */
export function buildGrammar(
  vocab: Vocabulary,
  weights: FillerWeights | null = DEFAULT_FILLER_WEIGHTS,
  jointProb = DEFAULT_JOINT_PROB,
  notCommandProb = DEFAULT_NOT_COMMAND_PROB,
): SpeechGrammar {
  const c = compiledTemplates('en');
  const defined = new Map<string, string | null>();
  const order: string[] = [];
  const emptyRules = new Set<string>();

  function defineAlternatives(name: string, alternatives: string[]): string | null {
    if (!defined.has(name)) {
      const uniq = [...new Set(alternatives)];
      defined.set(name, uniq.length > 0 ? uniq.join(' | ') : null);
      order.push(name);
    }
    return defined.get(name) === null ? null : `<${name}>`;
  }

  function listRef(listName: string, requires: NameRequirement | undefined): string | null {
    const alts = slotAlternatives(c, vocab, listName, requires, weights !== null);
    if (alts.includes(FILLER_SLOT)) return defineAlternatives('filler', [`( ${MODEL_PHONES.map(phoneWord).join(' | ')} )+`]);
    if (listName === 'name') return defineAlternatives(ruleName(`name_${requirementKey(requires)}`), alts);
    if (listName === 'area' || listName === 'list') return defineAlternatives(listName === 'area' ? 'area' : 'list_name', alts);
    return defineAlternatives(ruleName(`l_${listName}`), alts);
  }

  function toJsgf(node: TemplateNode, requires: NameRequirement | undefined): string | null {
    switch (node.kind) {
      case 'word': {
        const w = tokenWords(node.token);
        return w ? w.join(' ') : null;
      }
      case 'seq': {
        const parts: string[] = [];
        for (const item of node.items) {
          const p = toJsgf(item, requires);
          if (p === null) return null;
          if (p !== '') parts.push(p);
        }
        return parts.join(' ');
      }
      case 'alt': {
        const opts = node.options.map((o) => toJsgf(o, requires));
        const nonEmpty = [...new Set(opts.filter((o): o is string => o !== null && o !== ''))];
        const hasEmpty = opts.includes('');
        if (nonEmpty.length === 0) return hasEmpty ? '' : null;
        const body = nonEmpty.join(' | ');
        return hasEmpty ? `[ ${body} ]` : nonEmpty.length === 1 ? body : `( ${body} )`;
      }
      case 'rule': {
        const body = c.rules.get(node.name);
        if (!body) return null;
        // Rules may contain {name}; their expansion depends on the group's requirement.
        const name = ruleName(usesName(body, c.rules) ? `r_${node.name}_${requirementKey(requires)}` : `r_${node.name}`);
        if (!defined.has(name)) {
          defined.set(name, null);
          const text = toJsgf(body, requires);
          if (text === '') emptyRules.add(name);
          defined.set(name, text === null || text === '' ? null : text);
          order.push(name);
        }
        if (emptyRules.has(name)) return '';
        return defined.get(name) === null ? null : `<${name}>`;
      }
      case 'range':
        return defineAlternatives(`n_${node.min}_${node.max}`, rangeAlternatives(node.min, node.max));
      case 'slot':
        return listRef(node.list, requires);
    }
  }

  const sentences: string[] = [];
  // The continuation fragments' words, for the dictionary (the JSGF is the command grammar: it has none of them).
  const fragments: string[] = [];
  for (const { group, sentences: nodes } of c.groups) {
    if (group.grammar === false) continue;
    for (const node of nodes) {
      const s = toJsgf(node, group.requires);
      if (s !== null && s !== '') (group.context === 'continuation' ? fragments : sentences).push(s);
    }
  }
  if (sentences.length === 0) throw new GrammarError('no template can be filled from this vocabulary');
  const bodies = [`public <command> = ${[...new Set(sentences)].map((s) => `( ${s} )`).join('\n  | ')};`];
  for (const name of order) {
    const body = defined.get(name);
    if (body) bodies.push(`<${name}> = ${body};`);
  }
  const used = new Set<string>();
  for (const b of bodies) {
    const rhs = b.slice(b.indexOf('=') + 1).replace(/<[^>]*>/g, ' ');
    for (const w of rhs.split(/[\s()[\]|;+]+/)) if (w) used.add(w);
  }
  const jsgf = ['#JSGF V1.0;', '', 'grammar homeagent;', '', ...bodies, ''].join('\n');
  // One resolution per list and requirement for all three FSGs (a free name's parts are worked out once, not per sentence).
  const resolved = new Map<string, string[]>();
  const resolve = (list: string, req: NameRequirement | undefined): string[] => {
    const key = `${list}|${requirementKey(req)}`;
    let alts = resolved.get(key);
    if (!alts) resolved.set(key, (alts = slotAlternatives(c, vocab, list, req, weights !== null)));
    return alts;
  };
  const notCommand = { leads: NOT_COMMAND_LEADS_EN, prob: notCommandProb };
  // The continuation's fragments are paths of the command grammar too, which the judge rejects (fsg.ts buildFsg `fragments`).
  const fsg = buildFsg(c, resolve, weights ?? DEFAULT_FILLER_WEIGHTS, [], 0, notCommand, true);
  if (fsg === null) throw new GrammarError('no template can be filled from this vocabulary');
  const continuationFsg = buildFsg(c, resolve, weights ?? DEFAULT_FILLER_WEIGHTS, LEADING_WORDS, 0, notCommand, true)!;
  const compoundFsg = buildFsg(c, resolve, weights ?? DEFAULT_FILLER_WEIGHTS, [], jointProb, notCommand)!;
  // Every word of every slot alternative the FSGs hold (a free name's decoys are not in the JSGF's filler rule).
  for (const alts of resolved.values()) for (const alt of alts) if (alt !== FILLER_SLOT) for (const w of alt.split(' ')) if (w) used.add(w);
  for (const w of LEADING_WORDS) used.add(w);
  for (const f of fragments) for (const w of f.replace(/<[^>]*>/g, ' ').split(/[\s()[\]|;+]+/)) if (w) used.add(w);
  if (notCommandProb > 0) for (const lead of NOT_COMMAND_LEADS_EN) for (const w of lead.split(' ')) used.add(w);
  // The aligner checks a command heard ending in a setting against corrections (pocketsphinx-judge.ts correctionSentences).
  for (const w of correctionWords()) used.add(w);
  return { jsgf, fsg, continuationFsg, compoundFsg, words: [...used].sort() };
}
