/**
 * Layer 1, the context window (seed 001 "Context Layer", RelevanceContext):
 * recent events, each with a TF-IDF vector of its three-branch text, persisted
 * to SQLite on every append. Prune protects the newest `tail` events, keeps
 * the `topK - tail` most relevant to the current input and archives the rest
 * into documents at their original timestamps.
 */
import type { ContextEvent } from '../kernel/memory-port.js';
import type { CutReason } from '../kernel/turn-types.js';
import { estimateTokens } from '../kernel/memory-port.js';
import type { Db } from './db.js';
import type { DocStore } from './documents.js';
import { VECTOR_FINGERPRINT } from './text.js';
import { cosine, parseVector, tfVector, type TfVector } from './vector-space.js';

/**
 * Neighbouring events folded into an archived event's vector, by offset and
 * weight: a reply is found by what it answers and what answers it (measured
 * on LoCoMo, test/bench/locomo.ts).
 */
const NEIGHBOUR_WEIGHTS: ReadonlyArray<readonly [number, number]> = [
  [-2, 0.25],
  [-1, 0.5],
  [1, 0.5],
  [2, 0.25],
];

/** A tool's memory policy (seed 001 ToolDef NoMemory and Cleaner). */
export interface ToolMemoryPolicy {
  no_memory?: boolean;
  cleaner?: (s: string) => string;
}

/** An event held in the window with its vector and insertion order. */
export interface WindowEntry {
  seq: number;
  event: ContextEvent;
  tf: TfVector;
}

interface EventRow {
  seq: number;
  id: string;
  time: number;
  kind: ContextEvent['kind'];
  source: string;
  input: string;
  response: string;
  tool: string | null;
  interrupted: number;
  speaker: string | null;
  vec: string;
  fp: string;
}

/**
 * The text an event contributes to vectors (seed 001 three-branch rule):
 * agent -> response, user -> input, cold_storage -> input + response; tool
 * events -> the call plus the output passed through the tool's cleaner, or
 * nothing when the tool is NoMemory.
 */
export function textForVector(ev: ContextEvent, policy: ToolMemoryPolicy | undefined): string {
  switch (ev.kind) {
    case 'agent':
      return ev.response;
    case 'user':
      return ev.input;
    case 'cold_storage':
      return `${ev.input}\n${ev.response}`;
    case 'tool': {
      if (policy?.no_memory) return '';
      let out = ev.response;
      if (policy?.cleaner) {
        try {
          out = policy.cleaner(out);
        } catch {
          out = '';
        }
      }
      return `${ev.input}\n${out}`;
    }
  }
}

/**
 * The `interrupted` column: 0 a whole reply, 1 cut by the user's stop, and
 * (issue 14) a reply cut short for another reason: 2 connection lost, 3
 * reply limit, 4 tool-call limit. An older release reads 2-4 as interrupted.
 */
const CUT_CODES: Record<CutReason, number> = { connection_lost: 2, reply_limit: 3, tool_call_limit: 4 };

function interruptionCode(ev: ContextEvent): number {
  if (ev.interrupted) return 1;
  return ev.cut ? CUT_CODES[ev.cut] : 0;
}

function interruptionOf(code: number): Pick<ContextEvent, 'interrupted' | 'cut'> {
  if (!code) return {};
  const cut = (Object.keys(CUT_CODES) as CutReason[]).find((k) => CUT_CODES[k] === code);
  return cut ? { cut } : { interrupted: true };
}

/** The context window over the memory database. */
export class ContextWindow {
  private entries: WindowEntry[] = [];
  private readonly st;

  constructor(
    private readonly db: Db,
    private readonly docs: DocStore,
    private readonly policyOf: (tool: string | undefined) => ToolMemoryPolicy | undefined,
    /** Whether the memory is at its size cap: events leaving the window are then dropped instead of archived as documents. */
    private readonly full: () => boolean = () => false,
    /** `neighbourContext` false: an archived event's vector holds its own words only (MemorySystem's RecallRules). */
    private readonly opts: { neighbourContext?: boolean } = {},
  ) {
    this.st = {
      insert: db.prepare(`INSERT INTO context_events(id, time, kind, source, input, response, tool, interrupted, speaker, vec, fp)
        VALUES(@id, @time, @kind, @source, @input, @response, @tool, @interrupted, @speaker, @vec, @fp)`),
      del: db.prepare('DELETE FROM context_events WHERE seq = ?'),
      exists: db.prepare('SELECT 1 FROM context_events WHERE id = ?'),
      queue: db.prepare('INSERT INTO rule_queue(event_id, time, speaker, text) VALUES(?, ?, ?, ?)'),
    };
  }

  /** Load persisted events, recomputing vectors stored under another fingerprint. Returns how many were recomputed. */
  load(): number {
    const rows = this.db.prepare('SELECT * FROM context_events ORDER BY seq').all() as EventRow[];
    const upd = this.db.prepare('UPDATE context_events SET vec = ?, fp = ? WHERE seq = ?');
    let recomputed = 0;
    this.entries = rows.map((r) => {
      const event: ContextEvent = {
        id: r.id,
        time: r.time,
        kind: r.kind,
        source: r.source,
        input: r.input,
        response: r.response,
        ...(r.tool !== null ? { tool: r.tool } : {}),
        ...interruptionOf(r.interrupted),
        ...(r.speaker !== null ? { speaker: r.speaker } : {}),
      };
      let tf = parseVector(r.vec);
      if (r.fp !== VECTOR_FINGERPRINT) {
        tf = tfVector(textForVector(event, this.policyOf(event.tool)));
        upd.run(JSON.stringify(tf), VECTOR_FINGERPRINT, r.seq);
        recomputed++;
      }
      return { seq: r.seq, event, tf };
    });
    this.sort();
    return recomputed;
  }

  private sort(): void {
    this.entries.sort((a, b) => a.event.time - b.event.time || a.seq - b.seq);
  }

  /** Persist and hold an event; user events are also queued for the rule distiller. Call inside a transaction when grouping. */
  append(event: ContextEvent): void {
    let ev = event;
    if (this.st.exists.get(ev.id)) ev = { ...ev, id: `${ev.id}#${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}` };
    const tf = tfVector(textForVector(ev, this.policyOf(ev.tool)));
    this.db
      .transaction(() => {
        const info = this.st.insert.run({
          id: ev.id,
          time: ev.time,
          kind: ev.kind,
          source: ev.source,
          input: ev.input,
          response: ev.response,
          tool: ev.tool ?? null,
          interrupted: interruptionCode(ev),
          speaker: ev.speaker ?? null,
          vec: JSON.stringify(tf),
          fp: VECTOR_FINGERPRINT,
        });
        if (ev.kind === 'user' && ev.input.trim() !== '') this.st.queue.run(ev.id, ev.time, ev.speaker ?? null, ev.input);
        this.entries.push({ seq: Number(info.lastInsertRowid), event: ev, tf });
      })
      .immediate();
    this.sort();
  }

  /**
   * Delete events by id (forgetting), with their rule-queue rows, in the
   * caller's transaction. Returns how many were held.
   */
  remove(ids: ReadonlySet<string>): number {
    if (ids.size === 0) return 0;
    const gone = this.entries.filter((e) => ids.has(e.event.id));
    for (const e of gone) {
      this.st.del.run(e.seq);
      this.db.prepare('DELETE FROM rule_queue WHERE event_id = ?').run(e.event.id);
    }
    this.entries = this.entries.filter((e) => !ids.has(e.event.id));
    return gone.length;
  }

  /** Number of events in the window. */
  size(): number {
    return this.entries.length;
  }

  /** The window's entries, oldest first (read-only view). */
  all(): readonly WindowEntry[] {
    return this.entries;
  }

  /**
   * Prune against `input` (seed 001): when more than `topK` events, protect
   * the newest `tail`, keep the `topK - tail` most relevant, archive the rest
   * to documents at their original timestamps, all in one transaction.
   * Returns the number archived.
   */
  prune(input: string, topK: number, tail: number, now: number): number {
    if (this.entries.length <= topK) return 0;
    const protectedCount = Math.min(tail, topK);
    const head = this.entries.slice(0, this.entries.length - protectedCount);
    const keepCount = Math.max(0, topK - protectedCount);
    const qtf = tfVector(input);
    const idfOf = this.cachedIdf();
    const scored = head.map((e) => ({ e, s: cosine(qtf, e.tf, idfOf) }));
    scored.sort((a, b) => b.s - a.s || b.e.event.time - a.e.event.time);
    const archive = scored.slice(keepCount).map((x) => x.e);
    const gone = new Set(archive.map((e) => e.seq));
    const position = new Map(this.entries.map((e, i) => [e.seq, i]));
    const neighbours = (seq: number): Array<{ text: string; weight: number }> => {
      if (this.opts.neighbourContext === false) return [];
      const i = position.get(seq)!;
      const out: Array<{ text: string; weight: number }> = [];
      for (const [d, weight] of NEIGHBOUR_WEIGHTS) {
        const e = this.entries[i + d];
        if (e && e.event.kind !== 'tool') out.push({ text: textForVector(e.event, undefined), weight });
      }
      return out;
    };
    this.db
      .transaction(() => {
        for (const { seq, event } of archive) {
          if (this.full()) {
            this.st.del.run(seq);
            continue;
          }
          const policy = this.policyOf(event.tool);
          const id = this.docs.add(
            {
              event_id: event.id,
              time: event.time,
              kind: event.kind,
              source: event.source,
              ...(event.speaker !== undefined ? { speaker: event.speaker } : {}),
              ...(event.tool !== undefined ? { tool: event.tool } : {}),
              input: event.input,
              response: event.response,
              vectorText: textForVector(event, policy),
              ...(policy?.no_memory ? {} : { context: neighbours(seq) }),
            },
            now,
          );
          if (policy?.no_memory) this.db.prepare('UPDATE docs SET distilled = 1 WHERE id = ?').run(id);
          this.st.del.run(seq);
        }
      })
      .immediate();
    this.entries = this.entries.filter((e) => !gone.has(e.seq));
    return archive.length;
  }

  /** Events in time order, newest last, taken newest-first until `budgetTokens` (at least one event when any). */
  timeline(budgetTokens: number): ContextEvent[] {
    const out: ContextEvent[] = [];
    let used = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!.event;
      used += estimateTokens(e.input) + estimateTokens(e.response) + 4;
      if (used > budgetTokens && out.length > 0) break;
      out.push(e);
    }
    return out.reverse();
  }

  /** How close the window's event `id` is to `query`: IDF-weighted cosine 0..1 (0 when it is not in the window), as DocStore.similarity. */
  similarity(query: string, id: string): number {
    const entry = this.entries.find((e) => e.event.id === id);
    return entry ? cosine(tfVector(query), entry.tf, (t) => this.docs.idfOf(t)) : 0;
  }

  /**
   * The documents' IDF of a term (unknown terms: log(2 + documents)), looked
   * up once per term for one ranking: the window's events share most of
   * their words, so a lookup per term and event would repeat itself.
   */
  private cachedIdf(): (term: string) => number {
    const cache = new Map<string, number>();
    return (t) => {
      let v = cache.get(t);
      if (v === undefined) {
        v = this.docs.idfOf(t) || Math.log(2 + this.docs.count());
        cache.set(t, v);
      }
      return v;
    };
  }

  /** Rank window events against `query` by cosine (the recall ranking's window channel, recall.ts). */
  rank(query: string, limit: number): Array<{ entry: WindowEntry; score: number }> {
    const qtf = tfVector(query);
    const idfOf = this.cachedIdf();
    return this.entries
      .map((entry) => ({ entry, score: cosine(qtf, entry.tf, idfOf) }))
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
}
