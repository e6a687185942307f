/**
 * The local intent matcher: a normalised sentence against the compiled
 * templates of its language, slots filled from the vocabulary. A sentence
 * must match a whole template (no keyword spotting); when several templates
 * match, the one with the fewest free-text (wildcard) words wins, then the
 * one defined first. Post-processing: timer parts -> `seconds` (and
 * `start_seconds` for the length that names a timer), the named
 * entity's domain -> `domain` when the template did not fix one.
 */
import type { IntentMatch, IntentSlots, Vocabulary } from './types.js';
import { detectLanguage } from '../kernel/language.js';
import { joinTokens, tokenise, type IntentLanguage } from './normalise.js';
import { parseRules, parseTemplate, type IntentTemplateGroup, type TemplateNode, type TemplateSet } from './template-syntax.js';
import { areaEntries, listNameEntries, nameEntries, requirementKey, templateListEntries, type SlotEntry } from './slot-lists.js';
import { TEMPLATES_EN } from './templates-en.js';
import { TEMPLATES_ZH } from './templates-zh.js';

/** A template set parsed once. */
export interface CompiledTemplates {
  set: TemplateSet;
  rules: Map<string, TemplateNode>;
  groups: Array<{ group: IntentTemplateGroup; sentences: TemplateNode[] }>;
}

const compiled = new Map<IntentLanguage, CompiledTemplates>();

/** The template set of `language`, parsed (cached). Throws TemplateSyntaxError on a broken template. */
export function compiledTemplates(language: IntentLanguage): CompiledTemplates {
  let c = compiled.get(language);
  if (!c) {
    const set = language === 'zh' ? TEMPLATES_ZH : TEMPLATES_EN;
    c = {
      set,
      rules: parseRules(set),
      groups: set.intents.map((group) => ({ group, sentences: group.sentences.map((s) => parseTemplate(s, language)) })),
    };
    compiled.set(language, c);
  }
  return c;
}

type Slots = Readonly<Record<string, string | number>>;
interface State {
  pos: number;
  slots: Slots;
  wild: number;
}

interface MatchContext {
  tokens: string[];
  language: IntentLanguage;
  rules: Map<string, TemplateNode>;
  list(name: string): SlotEntry[] | Wildcard;
  budget: { steps: number };
}

/** A free-text list as the matcher uses it: the words it never takes (TemplateList.stopWords), and how many it takes at most (TemplateList.maxWords). */
interface Wildcard {
  kind: 'wildcard';
  stop: ReadonlySet<string>;
  max: number;
}

const MAX_STEPS = 200_000;
const MAX_WILDCARD_TOKENS = 8;

function* matchNode(node: TemplateNode, st: State, ctx: MatchContext): Generator<State> {
  if (--ctx.budget.steps < 0) return;
  const toks = ctx.tokens;
  switch (node.kind) {
    case 'word':
      if (toks[st.pos] === node.token) yield { ...st, pos: st.pos + 1 };
      return;
    case 'seq':
      yield* matchSeq(node.items, 0, st, ctx);
      return;
    case 'alt':
      for (const opt of node.options) yield* matchNode(opt, st, ctx);
      return;
    case 'rule': {
      const body = ctx.rules.get(node.name);
      if (body) yield* matchNode(body, st, ctx);
      return;
    }
    case 'range': {
      const t = toks[st.pos];
      if (t !== undefined && /^\d+(\.\d+)?$/.test(t)) {
        const v = Number(t);
        if (v >= node.min && v <= node.max) yield { ...st, pos: st.pos + 1, slots: { ...st.slots, [node.slot]: v } };
      }
      return;
    }
    case 'slot': {
      const entries = ctx.list(node.list);
      if (!Array.isArray(entries)) {
        const max = Math.min(toks.length - st.pos, entries.max);
        for (let n = 1; n <= max; n++) {
          if (entries.stop.has(toks[st.pos + n - 1]!)) return;
          const value = joinTokens(toks.slice(st.pos, st.pos + n), ctx.language);
          yield { pos: st.pos + n, wild: st.wild + n, slots: { ...st.slots, [node.slot]: value } };
        }
        return;
      }
      for (const e of entries) {
        if (e.tokens.every((t, i) => toks[st.pos + i] === t)) {
          yield { ...st, pos: st.pos + e.tokens.length, slots: { ...st.slots, ...e.slots, [node.slot]: e.out } };
        }
      }
      return;
    }
  }
}

function* matchSeq(items: TemplateNode[], i: number, st: State, ctx: MatchContext): Generator<State> {
  if (i === items.length) {
    yield st;
    return;
  }
  for (const next of matchNode(items[i]!, st, ctx)) yield* matchSeq(items, i + 1, next, ctx);
}

function postProcess(intent: string, raw: Slots, group: IntentTemplateGroup, vocab: Vocabulary, language: IntentLanguage): IntentSlots {
  const slots: IntentSlots = { ...(group.slots ?? {}), ...raw };
  // A length of time said in parts (hours, minutes, seconds) becomes `seconds`; the length a timer was started
  // with, said to pick it ("the 10 minute timer"), becomes `start_seconds`.
  const total = (p: string): number | undefined => {
    const [h, m, s, hh, hm] = ['hours', 'minutes', 'seconds', 'half_hours', 'half_minutes'].map((u) => slots[`${p}${u}`]);
    if (typeof h !== 'number' && typeof m !== 'number' && typeof s !== 'number') return undefined;
    const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
    // "2 and a half minutes": the half is its own slot beside the number (templates-en.ts durationRules).
    if (typeof hh === 'number') slots[`${p}hours`] = n(h) + hh;
    if (typeof hm === 'number') slots[`${p}minutes`] = n(m) + hm;
    for (const u of ['half_hours', 'half_minutes']) delete slots[`${p}${u}`];
    return Math.round((n(h) + n(hh)) * 3600 + (n(m) + n(hm)) * 60 + n(s));
  };
  const secs = total('');
  if (secs !== undefined) slots.seconds = secs;
  else if (intent === 'HassStartTimer') slots.seconds = 0;
  const start = total('start_');
  if (start !== undefined) slots.start_seconds = start;
  if (typeof slots.name === 'string' && slots.domain === undefined) {
    const domains = new Set(vocab.entities.filter((e) => e.name === slots.name).map((e) => e.domain));
    if (domains.size === 1) slots.domain = [...domains][0];
  }
  if (typeof slots.location === 'string' && language === 'en') {
    slots.location = slots.location.replace(/\b\w/g, (c) => c.toUpperCase());
  }
  // "The light in the office" means what "the lights in the office" means (the recogniser cannot tell
  // them apart, and the room bounds it): the kind's own word said with a room is no single device.
  if (slots.device !== undefined && slots.device === slots.domain && slots.area !== undefined) delete slots.device;
  return slots;
}

/** How matchIntent reads its text. */
export interface MatchOptions {
  /**
   * The text was heard right after a command acted on at its pause: the
   * continuation fragments (IntentTemplateGroup.context 'continuation', "to
   * fifty percent") match too. Default false: typed text never matches them.
   */
  continuation?: boolean;
}

/**
 * Match `text` against the templates of `language` (default: 'zh' when the
 * text has Chinese characters, else 'en') with names, rooms and lists from
 * `vocab`. Returns null when no template matches the whole sentence.
 */
export function matchIntent(text: string, vocab: Vocabulary, language?: IntentLanguage, opts?: MatchOptions): IntentMatch | null {
  const lang: IntentLanguage = language ?? detectLanguage(text);
  const tokens = tokenise(text, lang);
  if (tokens.length === 0) return null;
  const plain = bestMatch(tokens, vocab, lang, opts);
  // Polite words around a command ("could you turn on the kitchen light please"): the command without them, when
  // that fits better (a newcomer's went to the LLM, or named a device "kitchen light please").
  const bare = lang === 'en' ? withoutPoliteness(tokens) : tokens;
  if (bare.length === tokens.length || bare.length === 0) return plain?.match ?? null;
  const polite = bestMatch(bare, vocab, lang, opts);
  return polite && (!plain || polite.rank < plain.rank) ? polite.match : (plain?.match ?? null);
}

/** Words of politeness before a command ("could you please", "i'd like you to", "please") and after it ("please", "for me", "thanks", "now"). */
const POLITE_LEAD = /^(?:(?:hey|ok|okay)\s+)?(?:(?:please\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+|kindly\s+)?|(?:i\s+want|i\s+would\s+like|i'd\s+like)\s+(?:you\s+)?to\s+|please\s+)?/;
const POLITE_TAIL = /\s+(?:please|for me|for now|thanks|thank you|now|right now)$/;

/** `tokens` (English) without POLITE_LEAD and POLITE_TAIL, as often as they repeat ("... for me please"). */
function withoutPoliteness(tokens: string[]): string[] {
  let text = tokens.join(' ');
  for (let prev = ''; prev !== text; ) {
    prev = text;
    text = text.replace(POLITE_LEAD, '').replace(POLITE_TAIL, '');
  }
  return text.split(' ').filter(Boolean);
}

/** The best match of `tokens` (see matchIntent) and its rank (free-text words twice, plus one without a name); null for none. */
function bestMatch(tokens: string[], vocab: Vocabulary, lang: IntentLanguage, opts?: MatchOptions): { match: IntentMatch; rank: number } | null {
  const c = compiledTemplates(lang);
  const cache = new Map<string, SlotEntry[] | Wildcard>();
  const fixedList = (name: string): SlotEntry[] | Wildcard => {
    let v = cache.get(name);
    if (v === undefined) {
      if (name === 'area') v = areaEntries(vocab, lang);
      else if (name === 'list') v = listNameEntries(vocab, lang);
      else {
        const l = c.set.lists[name];
        v = l === undefined ? [] : l.wildcard ? { kind: 'wildcard', stop: new Set(l.stopWords ?? []), max: l.maxWords ?? MAX_WILDCARD_TOKENS } : templateListEntries(l, lang);
      }
      cache.set(name, v);
    }
    return v;
  };
  // Best: fewest free-text words, then a match naming an entity (a name is
  // more specific than room + device type), then the template defined first.
  let best: { rank: number; intent: string; slots: Slots; group: IntentTemplateGroup } | null = null;
  for (const { group, sentences } of c.groups) {
    if (group.context === 'continuation' && opts?.continuation !== true) continue;
    const nameKey = `name:${requirementKey(group.requires)}`;
    const ctx: MatchContext = {
      tokens,
      language: lang,
      rules: c.rules,
      budget: { steps: MAX_STEPS },
      list: (name) => {
        if (name !== 'name') return fixedList(name);
        let v = cache.get(nameKey);
        if (v === undefined) {
          v = nameEntries(vocab, group.requires, lang);
          cache.set(nameKey, v);
        }
        return v;
      },
    };
    for (const sentence of sentences) {
      for (const st of matchNode(sentence, { pos: 0, slots: {}, wild: 0 }, ctx)) {
        if (st.pos !== tokens.length) continue;
        const rank = st.wild * 2 + (st.slots.name === undefined ? 1 : 0);
        if (best === null || rank < best.rank) best = { rank, intent: group.intent, slots: st.slots, group };
        if (rank === 0) break;
      }
      if (best?.rank === 0) break;
    }
    if (best?.rank === 0) break;
  }
  if (!best) return null;
  return {
    rank: best.rank,
    match: {
      intent: best.intent,
      slots: postProcess(best.intent, best.slots, best.group, vocab, lang),
      text: joinTokens(tokens, lang),
      language: lang,
    },
  };
}
