/**
 * Settings of the memory system (ConfigRegistry keys, seed 000 §10), with the
 * defaults of seed 001 "Three-Layer Memory" / seed 000 §4 and §8.
 */
import type { SettingDef, SettingsAPI } from '../kernel/settings-types.js';

/** Every key memory registers. Intervals are minutes; hours for the cold-document age. */
export const MEMORY_SETTINGS: readonly SettingDef[] = [
  { key: 'core.memory.top_k', type: 'integer', default: 30, min: 2, max: 1000, description: 'Context window size kept after pruning (seed 001 keep topK)' },
  { key: 'core.memory.protected_tail', type: 'integer', default: 10, min: 0, max: 1000, description: 'Newest context events never pruned' },
  { key: 'core.memory.prompt_docs', type: 'integer', default: 3, min: 0, max: 20, description: 'Documents auto-injected into the prompt (seed 001 top3)' },
  {
    key: 'core.memory.prompt_doc_min_similarity',
    type: 'number',
    default: 0.6,
    min: 0,
    max: 1,
    description: "A turn of this conversation that a compaction summary already covers is recalled word for word into an ordinary turn's prompt only when its IDF-weighted cosine similarity to what was said reaches this (0..1); below it, it is noise every later prompt would carry (issue 19). Older conversations, memory_recall and doc_query are not limited by it.",
  },
  { key: 'core.memory.bfs_depth', type: 'integer', default: 2, min: 1, max: 4, description: 'Graph recall BFS depth' },
  { key: 'core.memory.prompt_relations', type: 'integer', default: 12, min: 0, max: 100, description: 'Graph relations injected into the prompt at most' },
  { key: 'core.memory.distill_interval_min', type: 'integer', default: 30, min: 1, max: 10080, description: 'distillLoop: context pruning into documents, minutes' },
  { key: 'core.memory.archive_interval_min', type: 'integer', default: 60, min: 1, max: 10080, description: 'archiveLoop: cold documents into the graph, minutes' },
  { key: 'core.memory.merge_interval_min', type: 'integer', default: 120, min: 1, max: 10080, description: 'mergeLoop: duplicate-entity detection, minutes' },
  { key: 'core.memory.review_interval_min', type: 'integer', default: 120, min: 1, max: 10080, description: 'reviewLoop: conflicting relations review, minutes' },
  { key: 'core.memory.rule_interval_min', type: 'integer', default: 10, min: 1, max: 10080, description: 'Rule distiller (我叫X / my name is X ...), minutes' },
  { key: 'core.memory.merge_threshold', type: 'number', default: 0.5, min: 0, max: 1, description: 'Bigram Jaccard threshold for merge candidates (seed 000 §8)' },
  { key: 'core.memory.cold_doc_hours', type: 'number', default: 72, min: 1, max: 100000, description: 'Documents unaccessed this long are cold (seed 000 §4)' },
  { key: 'core.memory.cold_doc_max_access', type: 'integer', default: 2, min: 0, max: 1000, description: 'Cold documents have at most this many accesses' },
  { key: 'core.memory.images_max_mb', type: 'number', default: 1024, min: 1, max: 1_000_000, description: 'Size budget of the stored pictures (<data dir>/images), MB; the oldest a conversation does not refer to go first' },
  { key: 'core.knowledge.inject_min_score', type: 'number', default: 0.3, min: 0, max: 1, description: 'Knowledge snippet injected into the prompt when its cosine score reaches this' },
];

/** Register the memory keys; a key already registered (second instance, restart) is left alone. */
export function registerMemorySettings(settings: SettingsAPI): void {
  for (const def of MEMORY_SETTINGS) {
    try {
      settings.register(def);
    } catch {
      // already registered by an earlier instance
    }
  }
}

/** A numeric setting, falling back to its registered default when unset or not a finite number. */
export function numberSetting(settings: SettingsAPI, key: string): number {
  let v: unknown;
  try {
    v = settings.get<unknown>(key);
  } catch {
    v = undefined;
  }
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n === 'number' && Number.isFinite(n)) return n;
  const def = MEMORY_SETTINGS.find((d) => d.key === key);
  return typeof def?.default === 'number' ? def.default : 0;
}
