/**
 * Where a decoded word sequence stands in the command grammar (issue 15
 * "Grammar-aware endpointing"): a complete sentence, and whether the grammar
 * has longer sentences that start with it. A sentence that could go on
 * ("turn on the kitchen" when "turn on the kitchen light" is also a
 * sentence) is never acted on at the first pause; only the full silence
 * ends it.
 *
 * Reads pocketsphinx's FSG text format (FSG_BEGIN, NUM_STATES, START_STATE,
 * FINAL_STATE, `TRANSITION from to prob word`; the grammar src/intents/fsg.ts
 * writes: no null arcs, one final state with no way out, and a joint state
 * whose arcs back to the start state open a second command; those arcs are
 * not a longer sentence).
 */

/** A parsed FSG: arcs by state and word. */
export interface FsgIndex {
  start: number;
  final: number;
  /** state -> word -> target states */
  arcs: Map<number, Map<string, number[]>>;
}

/** Parse FSG text. Throws Error naming the line when a TRANSITION line is malformed or START/FINAL is missing. */
export function parseFsg(text: string): FsgIndex {
  let start: number | undefined;
  let final: number | undefined;
  const arcs = new Map<number, Map<string, number[]>>();
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line.startsWith('START_STATE')) start = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('FINAL_STATE')) final = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('TRANSITION') || line.startsWith('T ')) {
      const p = line.split(/\s+/);
      const from = Number(p[1]);
      const to = Number(p[2]);
      const word = p[4];
      if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`FSG line ${i + 1}: malformed transition "${line}"`);
      if (word === undefined) continue; // a null arc (none in our grammars)
      let byWord = arcs.get(from);
      if (!byWord) arcs.set(from, (byWord = new Map()));
      const list = byWord.get(word) ?? [];
      list.push(to);
      byWord.set(word, list);
    }
  }
  if (start === undefined || final === undefined || Number.isNaN(start) || Number.isNaN(final)) throw new Error('FSG: START_STATE or FINAL_STATE missing');
  return { start, final, arcs };
}

/** Where `words` stand in the grammar. */
export interface SentenceStanding {
  /** The words are a whole sentence of the grammar. */
  complete: boolean;
  /** The grammar has a longer sentence that starts with these words. */
  continuable: boolean;
  /** The words such a longer sentence goes on with (empty when none). */
  next: string[];
}

/**
 * Walk `words` (as decoded: alternative pronunciations `word(2)` are the
 * word) from the start state.
 */
export function standing(fsg: FsgIndex, words: readonly string[]): SentenceStanding {
  let states = new Set<number>([fsg.start]);
  for (const raw of words) {
    const w = raw.replace(/\(\d+\)$/, '');
    const next = new Set<number>();
    for (const s of states) for (const t of fsg.arcs.get(s)?.get(w) ?? []) next.add(t);
    if (next.size === 0) return { complete: false, continuable: false, next: [] };
    states = next;
  }
  // Arcs back to the start are the joint to a second command (fsg.ts serialise): the sentence does not go on there.
  const next = new Set<string>();
  for (const s of states) {
    if (s === fsg.final) continue;
    for (const [w, to] of fsg.arcs.get(s) ?? []) if (to.some((t) => t !== fsg.start)) next.add(w);
  }
  return { complete: states.has(fsg.final), continuable: next.size > 0, next: [...next].sort() };
}
