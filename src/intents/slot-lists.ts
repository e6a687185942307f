/**
 * Slot lists filled from the home's vocabulary, shared by the matcher and the
 * grammar so that both accept exactly the same names: entity names and
 * aliases (and the last part of a zigbee2mqtt friendly name with slashes,
 * "office/desk lamp" -> "desk lamp"), room names (plus Chinese room words
 * for rooms the registry names in English), and list names.
 */
import type { VocabEntity, Vocabulary } from './types.js';
import { tokenise, type IntentLanguage } from './normalise.js';
import type { NameRequirement, TemplateList } from './template-syntax.js';
import { AREA_NAMES_ZH } from './builtin-lists.js';

/** One way to say a slot value: its tokens and the value the slot gets. */
export interface SlotEntry {
  tokens: string[];
  out: string | number;
  /** More slots the value sets (ListValue.slots). */
  slots?: Readonly<Record<string, string | number>>;
  /** The entity, for name entries. */
  entity?: VocabEntity;
}

/** Spoken forms of an entity's name: name, aliases, last segment of a slash path. */
export function spokenNames(entity: VocabEntity): string[] {
  const forms = new Set<string>();
  for (const n of [entity.name, ...(entity.aliases ?? [])]) {
    if (!n || !n.trim()) continue;
    forms.add(n);
    if (n.includes('/')) {
      const last = n.split('/').filter((p) => p.trim()).at(-1);
      if (last) forms.add(last);
    }
  }
  return [...forms];
}

/** True when `entity` satisfies `req` (absent: every entity). */
export function entityQualifies(entity: VocabEntity, req: NameRequirement | undefined): boolean {
  if (!req) return true;
  if (req.domains?.includes(entity.domain)) return true;
  if (req.sensorClasses && (entity.domain === 'sensor' || entity.domain === 'binary_sensor')) {
    return entity.device_class !== undefined && req.sensorClasses.includes(entity.device_class);
  }
  return false;
}

/** Stable key of a requirement, for caching and grammar rule names. */
export function requirementKey(req: NameRequirement | undefined): string {
  if (!req) return 'any';
  return [...(req.domains ?? []), ...(req.sensorClasses ?? []).map((c) => `sc_${c}`)].sort().join('_') || 'any';
}

/** Name entries of the vocabulary for one requirement. */
export function nameEntries(vocab: Vocabulary, req: NameRequirement | undefined, language: IntentLanguage): SlotEntry[] {
  const out: SlotEntry[] = [];
  for (const entity of vocab.entities) {
    if (!entityQualifies(entity, req)) continue;
    for (const form of spokenNames(entity)) {
      const tokens = tokenise(form, language);
      if (tokens.length > 0) out.push({ tokens, out: entity.name, entity });
    }
  }
  return out;
}

/** Room entries: the vocabulary's areas, and for Chinese their usual Chinese names. */
export function areaEntries(vocab: Vocabulary, language: IntentLanguage): SlotEntry[] {
  const out: SlotEntry[] = [];
  for (const area of vocab.areas) {
    const tokens = tokenise(area, language);
    if (tokens.length > 0) out.push({ tokens, out: area });
    if (language === 'zh') {
      const lower = area.trim().toLowerCase();
      for (const [zh, names] of Object.entries(AREA_NAMES_ZH)) {
        if (names.includes(lower)) out.push({ tokens: tokenise(zh, 'zh'), out: area });
      }
    }
  }
  return out;
}

/** Entries of the vocabulary's shopping/todo lists. */
export function listNameEntries(vocab: Vocabulary, language: IntentLanguage): SlotEntry[] {
  return (vocab.lists ?? [])
    .map((l) => ({ tokens: tokenise(l.replace(/\blist$/i, ''), language), out: l }))
    .filter((e) => e.tokens.length > 0);
}

/** Entries of a fixed template list. */
export function templateListEntries(list: TemplateList, language: IntentLanguage): SlotEntry[] {
  return (list.values ?? []).map((v) => {
    const said = typeof v === 'string' ? v : v.in;
    const out = typeof v === 'string' ? v : v.out;
    return { tokens: tokenise(said, language), out, ...(typeof v !== 'string' && v.slots ? { slots: v.slots } : {}) };
  });
}
