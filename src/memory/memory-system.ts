/**
 * The memory system (seed 001 "Three-Layer Memory", seed 000 §4/§8): the
 * kernel's `KernelMemory` over one SQLite database — context window ->
 * documents -> graph — plus the knowledge base, one tick of each heartbeat
 * loop (their timers are MemoryPlugin's, src/memory/memory-plugin.ts) and the
 * plugin-facing MemoryAPI.
 *
 * MarkRecalled: ids returned by memory_recall since the last user event are
 * remembered here and skipped by recallForPrompt, in addition to any ids the
 * kernel passes in `exclude`.
 */
import path from 'node:path';
import type { ContextEvent, KernelMemory, PromptMemory } from '../kernel/memory-port.js';
import { estimateTokens } from '../kernel/memory-port.js';
import type { Logger } from '../kernel/log-types.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import type { MemItem, MemoryAPI, PersonFact, SocialAPI, SocialReadAPI, Triple } from '../kernel/memory-types.js';
import { UNKNOWN_SPEAKER, UNKNOWN_SPEAKER_ZH } from '../kernel/people.js';
import { hasHan } from '../kernel/language.js';
import { isSelfInput } from '../kernel/turn-types.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import type { ToolDef } from '../kernel/stage-types.js';
import { KnowledgeBase } from '../knowledge/store.js';
import { knowledgeTools } from '../knowledge/tools.js';
import { ContextWindow, type ToolMemoryPolicy } from './context-window.js';
import { getMeta, openMemoryDb, setMeta, type Db } from './db.js';
import { docToTriples, ruleTriples } from './distiller.js';
import { DocStore, type DocRow, type SearchOptions } from './documents.js';
import { queryTimeRange } from './time-query.js';
import { GraphStore } from './graph.js';
import { setJiebaCacheDir } from './jieba.js';
import { candidateKey, detectConflicts, detectMergeCandidates, markSeen, mergePrompt, reviewPrompt } from './merge-detect.js';
import { numberSetting, registerMemorySettings } from './settings.js';
import { memoryTools } from './tools.js';
import { cleanText } from './text.js';
import { Social, personFact as personFactOf, relationVisible, type Viewer } from './social.js';
import { MemoryNotFoundError } from './errors.js';
import { isSensitiveText, visibleTo } from '../kernel/sensitive.js';
import { DenseIndex, type EmbeddingSource } from './dense.js';

/** Constructor options. `clock` gives the wall time, ms since epoch (tests pass a FakeClock and run weeks of fake time). */
export interface MemorySystemOptions {
  dataDir: string;
  settings: SettingsAPI;
  log: Logger;
  clock?: Pick<Clock, 'now'>;
  /** Hands a consolidation prompt to the kernel's `_consolidation_` self-input queue (seed 000 §8). */
  enqueueConsolidation?: (text: string) => void;
  /** Shipped knowledge seeds (default: the repo's data/knowledge). */
  knowledgeSeedDir?: string;
  /** Where the trimmed jieba dictionary is cached (see jieba.ts; default: the OS temp directory). */
  jiebaCacheDir?: string;
  /** The embedding source for dense recall (ProviderManager.embedder; dense.ts), read on every use; none = lexical only. */
  embedder?: () => EmbeddingSource | undefined;
}

/** What `homeagent memory export --person NAME` writes (MemorySystem.exportPerson); times are ISO 8601. */
export interface PersonExport {
  format: 'homeagent.person-export/1';
  exported_at: string;
  person: string;
  /** Whether the person is on the household's list (identified speaking or added as a person). */
  household_member: boolean;
  first_seen?: string;
  last_seen?: string;
  entity: { name: string; type: string; mention_count: number; created: string; updated: string } | null;
  aliases: string[];
  traits: Record<string, string>;
  relations: Array<Omit<PersonFact, 'updated'> & { updated: string; confidence: number; doc_id: number | null }>;
  /** What the person said: context events, archived documents, utterances waiting for the rule distiller. */
  said: { context_events: Array<Record<string, unknown>>; documents: Array<Record<string, unknown>>; rule_queue: Array<Record<string, unknown>> };
  /** What others (or the box) said that names the person. */
  mentioned: { context_events: Array<Record<string, unknown>>; documents: Array<Record<string, unknown>> };
}

/** Names of the heartbeat loops (seed 001 ④ and ⑤). */
export type LoopName = 'distill' | 'archive' | 'merge' | 'review' | 'rules';

/** The interval setting (minutes) of each loop; the loops are run by MemoryPlugin (memory-plugin.ts). */
export const LOOP_SETTINGS: Readonly<Record<LoopName, string>> = {
  distill: 'core.memory.distill_interval_min',
  archive: 'core.memory.archive_interval_min',
  merge: 'core.memory.merge_interval_min',
  review: 'core.memory.review_interval_min',
  rules: 'core.memory.rule_interval_min',
};

/** One item of the non-consuming search over documents and the window. */
export interface RecallHit {
  /** `doc:<id>` or `event:<event id>`. */
  id: string;
  kind: 'document' | 'event';
  /** The original event id (archived events keep theirs). */
  event_id: string | null;
  time: number;
  speaker: string | null;
  text: string;
  score: number;
}

/**
 * Whether `viewer` may be shown a document (issue 18): one whose words touch
 * a sensitive topic (src/memory/sensitive.ts) only to the person who said it
 * or had it noted (an unidentified speaker's to unidentified speakers). A
 * note nobody in particular asked for is the household's (the guest Wi-Fi
 * password): shown to people, not to plugins. A sensitive reply of the box
 * is shown to nobody: it answered someone, and recall does not volunteer it.
 */
export function docVisible(d: Pick<DocRow, 'title' | 'input' | 'response' | 'speaker' | 'kind'>, viewer: Viewer): boolean {
  if (!isSensitiveText(`${d.title}\n${d.input}\n${d.response}`)) return true;
  if (d.speaker === null && d.kind === 'note') return viewer !== null;
  const owner = d.speaker ?? (d.kind === 'user' ? UNKNOWN_SPEAKER : null);
  return visibleTo(true, owner, viewer);
}

/** `s` as a literal inside a regular expression. */
function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Words by which a speaker talks about themselves. */
const FIRST_PERSON = /\b(?:i|me|my|mine|myself)\b|我/i;

/** Render a document as one prompt line's text: `speaker: input / response`. */
function docText(d: Pick<DocRow, 'title' | 'input' | 'response' | 'speaker' | 'kind'>): string {
  const who = d.speaker ?? (d.kind === 'agent' ? 'assistant' : d.kind === 'user' ? 'user' : d.kind);
  const body = [d.title, d.input, d.response].filter((s) => s !== '').join(' / ');
  return `${who}: ${body}`;
}

/** Short local-time stamp `YYYY-MM-DD HH:MM` (UTC) for prompt lines. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** The memory system; see the module comment. All KernelMemory methods log instead of throwing. */
export class MemorySystem implements KernelMemory {
  readonly db: Db;
  readonly docs: DocStore;
  readonly graph: GraphStore;
  readonly window: ContextWindow;
  readonly knowledge: KnowledgeBase;
  /** The household's people (src/memory/social.ts). */
  readonly social: Social;
  /** Dense recall from the provider's embeddings (issue 19; dense.ts). */
  readonly dense: DenseIndex;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly log: Logger;
  private readonly settings: SettingsAPI;
  private readonly policies = new Map<string, ToolMemoryPolicy>();
  private readonly speakers = new Set<string>();
  private readonly recalled = new Set<string>();
  private lastInput = '';
  private closed = false;

  constructor(private readonly opts: MemorySystemOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
    this.settings = opts.settings;
    registerMemorySettings(opts.settings);
    if (opts.jiebaCacheDir !== undefined) setJiebaCacheDir(opts.jiebaCacheDir);
    this.db = openMemoryDb(opts.dataDir);
    this.docs = new DocStore(this.db);
    this.graph = new GraphStore(this.db);
    this.window = new ContextWindow(this.db, this.docs, (tool) => (tool ? this.policies.get(tool) : undefined));
    this.social = new Social(this.db, this.graph, () => this.now());
    this.fixupPeople();
    const docsRecomputed = this.docs.recomputeMismatched();
    const eventsRecomputed = this.window.load();
    if (docsRecomputed + eventsRecomputed > 0) this.log.info({ docsRecomputed, eventsRecomputed }, 'vectors of another fingerprint recomputed');
    for (const s of this.db.prepare('SELECT DISTINCT speaker FROM docs WHERE speaker IS NOT NULL').pluck().all() as string[]) this.addSpeaker(s);
    for (const e of this.window.all()) if (e.event.speaker) this.addSpeaker(e.event.speaker);
    this.dense = new DenseIndex({ db: this.db, embedder: opts.embedder ?? (() => undefined), log: opts.log, now: () => this.now() });
    void this.dense.catchUp();
    this.knowledge = new KnowledgeBase({
      dir: path.join(opts.dataDir, 'knowledge'),
      ...(opts.knowledgeSeedDir !== undefined ? { seedDir: opts.knowledgeSeedDir } : {}),
      log: opts.log,
    });
  }

  /** The current time from the injected clock (ms since epoch). */
  now(): number {
    return this.clock.now();
  }

  private addSpeaker(s: string): void {
    const n = cleanText(s);
    if (n.length >= 2) this.speakers.add(n);
  }

  private setting(key: string): number {
    return numberSetting(this.settings, key);
  }

  // ---- KernelMemory -------------------------------------------------------

  /**
   * Record an event (persisted with synchronous=FULL before returning). A
   * user event starts a new turn for MarkRecalled; its speaker is a person of
   * the household from then on. Events of the kernel's own inputs (source
   * `_kernel_`, `isSelfInput`) are refused here too: housekeeping is never
   * conversation.
   */
  append(input: ContextEvent): void {
    let event = input;
    try {
      if (isSelfInput({ source: event.source, channel: '' })) return;
      // One spelling per person: what was said is filed under the name the household already uses.
      if (event.speaker) event = { ...event, speaker: this.social.canonicalName(event.speaker) };
      this.window.append(event);
      if (event.kind === 'user') {
        this.recalled.clear();
        this.lastInput = event.input;
      }
      if (event.speaker) {
        this.addSpeaker(event.speaker);
        if (event.kind === 'user') this.social.heard(event.speaker, event.time);
      }
    } catch (err) {
      this.log.error({ err, id: event.id }, 'memory append failed');
    }
  }

  /** Prune the window against `currentInput` (top_k / protected_tail settings). */
  prune(currentInput: string): void {
    try {
      this.window.prune(currentInput, this.setting('core.memory.top_k'), this.setting('core.memory.protected_tail'), this.now());
    } catch (err) {
      this.log.error({ err }, 'memory prune failed');
    }
  }

  /** The window's events, oldest first, newest-first within `budgetTokens`. */
  timeline(budgetTokens: number): ContextEvent[] {
    return this.window.timeline(budgetTokens);
  }

  /**
   * The read-only memory block of the prompt: top documents (core.memory.prompt_docs),
   * graph relations from BFS recall and a knowledge passage when relevant,
   * added best-first until `budgetTokens`. Skips ids in `exclude` and those
   * memory_recall returned this turn, and what `speaker` (the person
   * speaking; undefined: unidentified) may not be told: another person's
   * sensitive facts and sentences; and what `shown` (the conversation text
   * the prompt already shows) holds already: a document whose input,
   * response and title all appear in it, a relation or knowledge passage
   * whose line does (compared lower-cased, whitespace collapsed). Never
   * throws (logs and returns empty).
   */
  async recallForPrompt(input: string, budgetTokens: number, exclude?: ReadonlySet<string>, speaker?: string, shown?: string): Promise<PromptMemory> {
    try {
      // The dense channel (provider embeddings): [] when none is configured or the source is down.
      const dense = await this.dense.rank(input);
      return this.assemble(input, budgetTokens, exclude, speaker, dense, shown);
    } catch (err) {
      this.log.error({ err }, 'memory recall failed');
      return { text: '', items: [] };
    }
  }

  private assemble(input: string, budgetTokens: number, exclude?: ReadonlySet<string>, speaker?: string, dense: readonly number[] = [], shown?: string): PromptMemory {
    const skip = (id: string): boolean => exclude?.has(id) === true || this.recalled.has(id);
    const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();
    const seen = shown ? norm(shown) : '';
    const inPrompt = (...parts: string[]): boolean => seen !== '' && parts.some((p) => p.trim() !== '') && parts.every((p) => p.trim() === '' || seen.includes(norm(p)));
    const sections: Array<{ title: string; items: MemItem[] }> = [];
    const docs = this.docs
      .search(input, this.setting('core.memory.prompt_docs') + 3, { ...this.searchOptions(input), ...(dense.length ? { dense } : {}) })
      .filter((h) => !skip(`doc:${h.doc.id}`) && docVisible(h.doc, speaker) && !inPrompt(h.doc.title, h.doc.input, h.doc.response))
      .slice(0, this.setting('core.memory.prompt_docs'));
    sections.push({
      title: '[Recalled from earlier conversations]',
      items: docs.map((h) => ({ id: `doc:${h.doc.id}`, kind: 'document', text: `[${stamp(h.doc.time)}] ${docText(h.doc)}`, score: h.score, time: h.doc.time })),
    });
    // "What do you know about me?": a speaker talking about themselves seeds the graph with their own entity.
    const graphQuery = speaker && FIRST_PERSON.test(input) ? `${input} ${speaker}` : input;
    const g = this.graph.recall(graphQuery, this.setting('core.memory.prompt_relations'), this.setting('core.memory.bfs_depth'));
    sections.push({
      title: '[Known facts]',
      items: g.relations
        .filter((r) => !skip(`rel:${r.relation.id}`) && relationVisible(r.relation, speaker) && !inPrompt(`${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`))
        .map((r) => ({ id: `rel:${r.relation.id}`, kind: 'relation', text: `${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`, score: r.score, time: r.relation.updated })),
    });
    const k = this.knowledge.search(input, 1)[0];
    if (k && k.score >= this.setting('core.knowledge.inject_min_score') && !skip(`knowledge:${k.name}`) && !inPrompt(k.snippet)) {
      sections.push({ title: '[Knowledge]', items: [{ id: `knowledge:${k.name}`, kind: 'knowledge', text: `${k.name}: ${k.snippet}`, score: k.score }] });
    }
    const lines: string[] = [];
    const items: MemItem[] = [];
    let used = 0;
    for (const s of sections) {
      let header = false;
      for (const item of s.items) {
        const line = `- ${item.text.replace(/\s+/g, ' ')}`;
        const cost = estimateTokens(line) + (header ? 0 : estimateTokens(s.title));
        if (used + cost > budgetTokens) break;
        if (!header) {
          lines.push(s.title);
          header = true;
        }
        lines.push(line);
        items.push(item);
        used += cost;
      }
    }
    for (const item of items) if (item.kind === 'document') this.docs.touch(Number(item.id.slice(4)));
    return { text: lines.join('\n'), items };
  }

  /** Ranking options for `query`: speakers it names and the time range it refers to. */
  private searchOptions(query: string): SearchOptions {
    const range = queryTimeRange(query, this.now());
    return { speakers: this.speakersIn(query), ...(range ? { range } : {}) };
  }

  /** Speakers (known household names) mentioned in `text`, lower-cased. */
  speakersIn(text: string): Set<string> {
    const t = cleanText(text);
    const out = new Set<string>();
    for (const s of this.speakers) if (t.includes(s)) out.add(s);
    return out;
  }

  /** Whether the household knows a person of this name (KernelMemory.isPerson). */
  isPerson(name: string): boolean {
    try {
      return this.social.isPerson(name);
    } catch {
      return false;
    }
  }

  /** memory_*, doc_*, person_* and knowledge_* tools. */
  tools(): ToolDef[] {
    return [...memoryTools(this), ...knowledgeTools(this.knowledge)];
  }

  /** Register a tool's NoMemory flag and cleaner (applied to its future events). */
  registerToolMemoryPolicy(tool: string, policy: ToolMemoryPolicy): void {
    this.policies.set(tool, policy);
  }

  /** Flush access counts and close the database (the loops' plugin is stopped before). Idempotent. */
  close(): void {
    if (this.closed) return;
    try {
      this.docs.flushAccess(this.now());
    } catch (err) {
      this.log.warn({ err }, 'flushing access counts failed');
    }
    this.db.close();
    this.closed = true;
  }

  // ---- search, documents, MarkRecalled ------------------------------------

  /**
   * Non-consuming search over documents and the context window, fused by rank
   * (the ranking the prompt's document block uses, with the window's events
   * as a third channel). Used by benches and diagnostics.
   */
  search(query: string, limit: number): RecallHit[] {
    const speakers = this.speakersIn(query);
    const range = queryTimeRange(query, this.now());
    const hits: RecallHit[] = this.docs.search(query, limit, { speakers, ...(range ? { range } : {}) }).map((h) => ({
      id: `doc:${h.doc.id}`,
      kind: 'document',
      event_id: h.doc.event_id,
      time: h.doc.time,
      speaker: h.doc.speaker,
      text: docText(h.doc),
      score: h.score,
    }));
    this.window.rank(query, limit).forEach((w, rank) => {
      const boost = w.entry.event.speaker && speakers.has(cleanText(w.entry.event.speaker)) ? 1.25 : 1;
      hits.push({
        id: `event:${w.entry.event.id}`,
        kind: 'event',
        event_id: w.entry.event.id,
        time: w.entry.event.time,
        speaker: w.entry.event.speaker ?? null,
        text: `${w.entry.event.speaker ?? w.entry.event.kind}: ${w.entry.event.input} ${w.entry.event.response}`.trim(),
        score: (boost * 1) / (60 + rank + 1),
      });
    });
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  /** Remember ids fetched by memory_recall this turn (MarkRecalled). */
  markRecalled(ids: Iterable<string>): void {
    for (const id of ids) this.recalled.add(id);
  }

  /**
   * doc_query (seed 001 Consume): search, delete the hits from the store and
   * append them to the context window as cold_storage events at their
   * original timestamps, in one transaction. Returns the consumed documents.
   * `viewer`: the person asking; another person's sensitive documents are left where they are.
   */
  consumeDocuments(query: string, limit: number, viewer?: Viewer): DocRow[] {
    const hits = this.docs.search(query, limit + 3, this.searchOptions(query)).filter((h) => docVisible(h.doc, viewer)).slice(0, limit);
    this.db
      .transaction(() => {
        for (const { doc } of hits) {
          this.docs.remove(doc.id);
          this.window.append({
            id: doc.event_id ?? `doc-${doc.id}`,
            time: doc.time,
            kind: 'cold_storage',
            source: doc.source,
            input: doc.title !== '' ? `${doc.title}\n${doc.input}` : doc.input,
            response: doc.response,
            ...(doc.speaker !== null ? { speaker: doc.speaker } : {}),
          });
        }
      })
      .immediate();
    return hits.map((h) => h.doc);
  }

  /** doc_commit: store a note as a document (durable when it returns), `speaker` the person who asked for it. Returns its id. */
  commitDocument(title: string, content: string, source = 'doc_commit', speaker?: string): number {
    return this.db
      .transaction(() => this.docs.add({ time: this.now(), kind: 'note', source, title, input: '', response: content, ...(speaker ? { speaker } : {}) }, this.now()))
      .immediate();
  }

  /** Statistics for memory_introspect. */
  introspect(): Record<string, unknown> {
    const count = (sql: string): number => Number(this.db.prepare(sql).pluck().get());
    const top = this.db.prepare('SELECT name, type, mention_count FROM entities ORDER BY mention_count DESC LIMIT 10').all();
    return {
      context_events: this.window.size(),
      documents: this.docs.count(),
      cold_candidates: count('SELECT count(*) FROM docs WHERE distilled = 0'),
      ...this.graph.stats(),
      rule_queue: count('SELECT count(*) FROM rule_queue'),
      consolidations_enqueued: count('SELECT count(*) FROM consolidation_seen'),
      sensitive_facts: count('SELECT count(*) FROM relations WHERE sensitive = 1'),
      people: this.social.list().map((p) => p.name).join(', ') || 'nobody identified yet',
      top_entities: top,
      knowledge_documents: this.knowledge.list().length,
    };
  }

  // ---- plugin API ---------------------------------------------------------

  /** The plugin-facing MemoryAPI (seed 000 §11 Memory().Recall/Commit). A plugin reads as no person: sensitive facts are left out. */
  api(): MemoryAPI {
    return {
      recall: async (query, limit) => {
        const n = limit ?? 10;
        const g = this.graph.recall(query, n, this.setting('core.memory.bfs_depth'));
        const items: MemItem[] = g.relations.filter((r) => relationVisible(r.relation, null)).map((r) => ({
          id: `rel:${r.relation.id}`,
          kind: 'relation',
          text: `${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`,
          score: r.score,
          time: r.relation.updated,
        }));
        const dense = await this.dense.rank(query);
        for (const h of this.docs.search(query, n, dense.length ? { dense } : {}).filter((x) => docVisible(x.doc, null))) items.push({ id: `doc:${h.doc.id}`, kind: 'document', text: docText(h.doc), score: h.score, time: h.doc.time });
        return items.slice(0, n * 2);
      },
      commit: async (triples: Triple[]) => this.graph.commit(triples, this.now()),
    };
  }

  /** The social API for built-in plugins (read and write; reads leave sensitive facts out). */
  socialApi(): SocialAPI {
    return this.social.api();
  }

  /** The social API's reading half (external plugins). */
  socialReadApi(): SocialReadAPI {
    return this.social.readApi(null);
  }

  /**
   * Everything stored about a person, for `homeagent memory export --person
   * NAME` (issue 18): the person (people row, entity, aliases), every
   * relation touching them (sensitive ones included: the household's admin
   * asks), what they said (context events, documents and queued utterances
   * with them as speaker) and the documents and events that mention their
   * name. Throws MemoryNotFoundError when nobody of that name is known.
   */
  exportPerson(name: string): PersonExport {
    const n = name.trim();
    const entity = this.social.entityOf(n);
    const person = this.social.person(entity?.name ?? n, undefined);
    const speakerRows = this.db.prepare('SELECT count(*) FROM docs WHERE speaker = ? COLLATE NOCASE').pluck().get(n) as number;
    if (!entity && !person && speakerRows === 0) throw new MemoryNotFoundError('memory export', `nobody called "${n}" is known`);
    const canonical = person?.name ?? entity?.name ?? n;
    const names = [...new Set([canonical, n, ...(person?.aliases ?? [])])];
    // Rows with their times as ISO 8601.
    const q = (sql: string, ...args: unknown[]) =>
      (this.db.prepare(sql).all(...args) as Array<Record<string, unknown>>).map((r) => ({ ...r, time: new Date(Number(r.time)).toISOString() }));
    const inNames = `(${names.map(() => '?').join(',')})`;
    const said = {
      context_events: q(`SELECT id, time, kind, source, speaker, input, response FROM context_events WHERE speaker COLLATE NOCASE IN ${inNames} ORDER BY time`, ...names),
      documents: q(`SELECT id, event_id, time, kind, source, speaker, title, input, response FROM docs WHERE speaker COLLATE NOCASE IN ${inNames} ORDER BY time`, ...names),
      rule_queue: q(`SELECT event_id, time, speaker, text FROM rule_queue WHERE speaker COLLATE NOCASE IN ${inNames} ORDER BY seq`, ...names),
    };
    const like = names.map((x) => `%${x.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const mentionWhere = (cols: string[]) => like.map(() => `(${cols.map((c) => `${c} LIKE ? ESCAPE '\\'`).join(' OR ')})`).join(' OR ');
    const likeArgs = (k: number) => like.flatMap((l) => Array<string>(k).fill(l));
    // LIKE finds candidates; a mention is the name as a word ("Al" is not in "also").
    const word = names.map((x) => (hasHan(x) ? new RegExp(escapeRe(x), 'u') : new RegExp(`(?:^|[^\\p{L}\\p{N}])${escapeRe(x)}(?:$|[^\\p{L}\\p{N}])`, 'iu')));
    const isMention = (r: Record<string, unknown>) => word.some((re) => re.test(`${String(r.title ?? '')}\n${String(r.input)}\n${String(r.response)}`));
    const mentioned = {
      context_events: q(
        `SELECT id, time, kind, source, speaker, input, response FROM context_events WHERE (speaker IS NULL OR speaker COLLATE NOCASE NOT IN ${inNames}) AND (${mentionWhere(['input', 'response'])}) ORDER BY time`,
        ...names,
        ...likeArgs(2),
      ).filter(isMention),
      documents: q(
        `SELECT id, event_id, time, kind, source, speaker, title, input, response FROM docs WHERE (speaker IS NULL OR speaker COLLATE NOCASE NOT IN ${inNames}) AND (${mentionWhere(['title', 'input', 'response'])}) ORDER BY time`,
        ...names,
        ...likeArgs(3),
      ).filter(isMention),
    };
    const relations = entity
      ? this.graph.relationsOf(entity.id, 100000).map((r) => ({ ...personFactOf(r), updated: new Date(r.updated).toISOString(), confidence: r.confidence, doc_id: r.doc_id }))
      : [];
    return {
      format: 'homeagent.person-export/1',
      exported_at: new Date(this.now()).toISOString(),
      person: canonical,
      household_member: this.social.isPerson(canonical),
      ...(person?.first_seen !== undefined ? { first_seen: new Date(person.first_seen).toISOString() } : {}),
      ...(person?.last_seen !== undefined ? { last_seen: new Date(person.last_seen).toISOString() } : {}),
      entity: entity ? { name: entity.name, type: entity.type, mention_count: entity.mention_count, created: new Date(entity.created).toISOString(), updated: new Date(entity.updated).toISOString() } : null,
      aliases: person?.aliases ?? [],
      traits: this.social.person(canonical, canonical)?.traits ?? {},
      relations,
      said,
      mentioned,
    };
  }

  /**
   * One-time repairs of a store written before issue 18 (meta `people_fixup`):
   * entities named after a channel (`console`, `cli`: the console and the CLI
   * injected them as the user) and the old unknown-speaker subjects (`user`,
   * `用户`) become "someone in the household"; whatever the kernel's own
   * `_consolidation_` turns left in the window, the rule queue or the
   * documents is removed.
   */
  private fixupPeople(): void {
    if (getMeta(this.db, 'people_fixup') === '1') return;
    const now = this.now();
    for (const [old, unknown] of [
      ['console', UNKNOWN_SPEAKER],
      ['cli', UNKNOWN_SPEAKER],
      ['user', UNKNOWN_SPEAKER],
      ['用户', UNKNOWN_SPEAKER_ZH],
    ] as const) {
      const e = this.graph.resolve(old);
      if (!e || e.name !== old) continue;
      if (this.graph.resolve(unknown)) this.graph.merge(unknown, old, now);
      else this.graph.editEntity(old, { new_name: unknown, type: 'person' }, now);
    }
    this.db
      .transaction(() => {
        this.db.prepare("DELETE FROM rule_queue WHERE event_id IN (SELECT id FROM context_events WHERE source LIKE '\\_%' ESCAPE '\\')").run();
        const gone = this.db.prepare("DELETE FROM context_events WHERE source LIKE '\\_%' ESCAPE '\\'").run().changes;
        for (const id of this.db.prepare("SELECT id FROM docs WHERE source LIKE '\\_%' ESCAPE '\\'").pluck().all() as number[]) this.docs.remove(id);
        setMeta(this.db, 'people_fixup', '1');
        if (gone > 0) this.log.info({ events: gone }, 'consolidation turns removed from the context window');
      })
      .immediate();
  }

  // ---- heartbeat loops ----------------------------------------------------

  /** Run one tick of a loop now. Errors are logged, never thrown. Resolves with what the tick did ({closed: 1} after close()). */
  async runLoopOnce(name: LoopName): Promise<Record<string, number>> {
    if (this.closed) return { closed: 1 };
    try {
      switch (name) {
        case 'distill':
          return this.tickDistill();
        case 'archive':
          return this.tickArchive();
        case 'merge':
          return this.tickMerge();
        case 'review':
          return this.tickReview();
        case 'rules':
          return this.tickRules();
      }
    } catch (err) {
      this.log.error({ err, loop: name }, 'memory loop tick failed');
      return { error: 1 };
    }
  }

  private tickDistill(): Record<string, number> {
    const archived = this.window.prune(this.lastInput, this.setting('core.memory.top_k'), this.setting('core.memory.protected_tail'), this.now());
    this.docs.flushAccess(this.now());
    return { archived };
  }

  private tickArchive(): Record<string, number> {
    const now = this.now();
    this.docs.flushAccess(now);
    const before = now - this.setting('core.memory.cold_doc_hours') * 3_600_000;
    const cold = this.docs.cold(before, this.setting('core.memory.cold_doc_max_access'), 500);
    let relations = 0;
    for (const d of cold) {
      const text = [d.title, d.input, d.response].filter((s) => s !== '').join('\n');
      const triples = d.kind === 'agent' ? [] : docToTriples(text, d.speaker ?? undefined);
      if (triples.length > 0) relations += this.graph.commit(triples, now, d.id).relations;
      this.docs.markDistilled(d.id);
    }
    return { cold: cold.length, relations };
  }

  private tickRules(): Record<string, number> {
    const rows = this.db.prepare('SELECT seq, speaker, text FROM rule_queue ORDER BY seq LIMIT 1000').all() as Array<{ seq: number; speaker: string | null; text: string }>;
    let relations = 0;
    const del = this.db.prepare('DELETE FROM rule_queue WHERE seq = ?');
    for (const r of rows) {
      const triples = ruleTriples(r.text, r.speaker ?? undefined);
      this.db
        .transaction(() => {
          if (triples.length > 0) relations += this.graph.commit(triples, this.now()).relations;
          del.run(r.seq);
        })
        .immediate();
    }
    return { utterances: rows.length, relations };
  }

  private tickMerge(): Record<string, number> {
    if (!this.opts.enqueueConsolidation) return { candidates: 0 };
    const now = this.now();
    const since = Number(getMeta(this.db, 'merge_since') ?? 0);
    const found = detectMergeCandidates(this.db, this.graph, since, this.setting('core.memory.merge_threshold'), 50);
    for (const c of found) {
      this.opts.enqueueConsolidation(mergePrompt(this.graph, c));
      markSeen(this.db, candidateKey(c), now);
    }
    if (found.length < 50) setMeta(this.db, 'merge_since', String(now));
    return { candidates: found.length };
  }

  private tickReview(): Record<string, number> {
    if (!this.opts.enqueueConsolidation) return { conflicts: 0 };
    const now = this.now();
    const since = Number(getMeta(this.db, 'review_since') ?? 0);
    const found = detectConflicts(this.db, this.graph, since, 20);
    for (const c of found) {
      this.opts.enqueueConsolidation(reviewPrompt(c));
      markSeen(this.db, c.key, now);
    }
    if (found.length < 20) setMeta(this.db, 'review_since', String(now));
    return { conflicts: found.length };
  }
}
