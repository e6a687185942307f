/**
 * The recogniser's intent, carried to the action: a grammar speech engine
 * (pocketsphinx, src/voice/stt) matches its transcript against the same
 * templates as the text matcher and reports the IntentMatch; the voice
 * pipeline puts it in the input's `meta.stt.intent`. The home plugin acts on
 * that match instead of matching the text again (one path from audio to
 * action), after checking here that it still fits the current home: the
 * grammar was built from the vocabulary of its day, and a device renamed or
 * removed since then must not be commanded by its old name.
 */
import { INTENT_NAMES } from './index.js';
import type { IntentMatch, IntentSlots, Vocabulary } from './types.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The IntentMatch an input's meta carries at `meta.stt.intent`, or undefined
 * when there is none or it is not a well-formed match (a known intent name,
 * slots of strings and numbers, the matched text, language 'en' or 'zh').
 * Meta crosses the bus as plain data, so the shape is checked, not assumed.
 */
export function carriedIntent(meta: Readonly<Record<string, unknown>> | undefined): IntentMatch | undefined {
  const stt = meta?.stt;
  if (!isRecord(stt)) return undefined;
  return wellFormedMatch(stt.intent);
}

/**
 * The two (or more) commands said in one breath an input's meta carries at
 * `meta.stt.intents` (SttResult.intents), in the order said; undefined when
 * there are none or any is not a well-formed match (checked as carriedIntent
 * checks one).
 */
export function carriedIntents(meta: Readonly<Record<string, unknown>> | undefined): IntentMatch[] | undefined {
  const stt = meta?.stt;
  if (!isRecord(stt) || !Array.isArray(stt.intents) || stt.intents.length < 2) return undefined;
  const out: IntentMatch[] = [];
  for (const m of stt.intents) {
    const ok = wellFormedMatch(m);
    if (!ok) return undefined;
    out.push(ok);
  }
  return out;
}

function wellFormedMatch(m: unknown): IntentMatch | undefined {
  if (!isRecord(m)) return undefined;
  if (typeof m.intent !== 'string' || !INTENT_NAMES.includes(m.intent)) return undefined;
  if (typeof m.text !== 'string' || (m.language !== 'en' && m.language !== 'zh')) return undefined;
  if (!isRecord(m.slots)) return undefined;
  const slots: IntentSlots = {};
  for (const [k, v] of Object.entries(m.slots)) {
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) slots[k] = v;
    else if (v !== undefined) return undefined;
  }
  const unsure = Array.isArray(m.unsure_between) && m.unsure_between.length === 2 && m.unsure_between.every((w) => typeof w === 'string') ? { unsure_between: [m.unsure_between[0], m.unsure_between[1]] as [string, string] } : {};
  return { intent: m.intent, slots, text: m.text, language: m.language, ...unsure };
}

/**
 * True when `match` fits the home `vocab` describes now: its `name` slot is
 * the name of a current entity (the matcher and the grammar fill it with the
 * entity's name) and its `area` slot a current room (case ignored). Slots
 * that name nothing in the home (numbers, colours, timer lengths) always fit.
 */
export function fitsVocabulary(match: IntentMatch, vocab: Vocabulary): boolean {
  const { name, area } = match.slots;
  const same = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();
  if (typeof name === 'string' && !vocab.entities.some((e) => same(e.name, name))) return false;
  if (typeof area === 'string' && !vocab.areas.some((a) => same(a, area))) return false;
  return true;
}
