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
import { maskPrivate } from '../kernel/prompt.js';
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
import type Database from 'better-sqlite3';
import { getMeta, openMemoryDb, setMeta, type Db } from './db.js';
import { TimeSlice } from '../kernel/time-slice.js';
import { docToTriples, ruleTriples } from './distiller.js';
import { DocStore, type DocRow, type RankWeights } from './documents.js';
import { prepareRecall, recallText, type RecallHit, type RecallOptions, type RecallQuery, type RecallRules, type RecallSource } from './recall.js';
import { GraphStore } from './graph.js';
import { setJiebaCacheDir } from './jieba.js';
import { candidateKey, detectConflicts, detectMergeCandidates, markSeen, mergePrompt, reviewPrompt } from './merge-detect.js';
import { numberSetting, registerMemorySettings } from './settings.js';
import { memoryTools } from './tools.js';
import { cleanText } from './text.js';
import { Social, personFact as personFactOf, relationVisible, type Viewer } from './social.js';
import { MemoryFullError, MemoryNotFoundError } from './errors.js';
import { DenseIndex, type EmbeddingSource } from './dense.js';
import { isSensitiveText, personKey, visibleTo } from '../kernel/sensitive.js';
import { candidateRareWords, sweepReferences, sweepTables, eraseFreedPages, forgetWords, mentionsAll, mentionsAny, wordTest, wordsOf } from './forget.js';
import { MemoryArgumentError } from './errors.js';
import { terms } from './text.js';
import { PictureStore } from './pictures.js';
import { householdOffsetMs, PICTURE_WORDS, pictureRange, pictureTools } from './picture-tools.js';

export type { RecallHit, RecallQuery, RecallRules } from './recall.js';

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
  /**
   * Told, synchronously, inside the forgetting transaction before it commits:
   * the service removes the same from the run log and the pre-update copies
   * (src/service/forgetting.ts); a throw rolls the forgetting back.
   */
  onForgotten?: (r: ForgetResult) => void;
  /** Recall rules turned off (RecallRules; the LoCoMo bench's ablation, the service passes none). */
  recallRules?: Partial<RecallRules>;
  /** Longest stretch (ms) a loop's tick holds the event loop between items (src/kernel/time-slice.ts; default SLICE_BUDGET_MS; tests: 0). */
  sliceBudgetMs?: number;
}

/** What to forget (issue 18): the words of "Forget that I ..." (`about`), an entity by name, and/or whole turns by input id. */
export interface ForgetRequest {
  about?: string;
  entity?: string;
  turns?: readonly string[];
}

/** What forgetting did: counts and ids, never the forgotten text; `rareWords` are for the other stores and are never logged. */
export interface ForgetResult {
  /** When (ms since epoch). */
  at: number;
  events: number;
  documents: number;
  relations: number;
  entities: number;
  versions: number;
  candidates: number;
  queued: number;
  /** Paragraphs of the knowledge base's user documents removed. */
  knowledge: number;
  /** Picture entries forgotten (of the forgotten turns, or describing what was forgotten); a picture nothing else refers to loses its file too. */
  pictures: number;
  /** Turns and facts that matched but are another person's (only they can have them forgotten); left as they are. */
  withheld: number;
  /** Input ids of the turns forgotten whole: the run log tombstones their events. */
  turns: string[];
  /** Ids of the context events forgotten (window and archived): the prompt history drops them. */
  eventIds: string[];
  /** Words of the forgotten texts found nowhere that remains: other stores holding them are scrubbed. */
  rareWords: string[];
  /** Whether the WAL was emptied (false: another connection held a snapshot). */
  checkpointed: boolean;
}

/** A sensitive fact waiting for its person's yes (MemorySystem.holdSensitive); `time` ms since epoch. */
export interface FactCandidate {
  id: number;
  time: number;
  /** The loop that found it: `rules`, `archive` or `consolidation`. */
  origin: string;
  subject: string;
  relation: string;
  object: string;
  sentence: string;
  /** The person it belongs to (who may say yes). */
  owner: string | null;
}

/**
 * The memory store's tables (version 3), which forgetting handles one by one
 * and leaves out of its safety-net sweep (src/memory/forget.ts sweepTables):
 * the sweep is for tables added later that nobody taught forgetting about.
 */
const FORGET_SWEEP_SKIP: ReadonlySet<string> = new Set([
  'meta', 'context_events', 'rule_queue', 'docs', 'doc_terms', 'term_df', 'kw_terms', 'entities', 'entity_terms', 'aliases',
  'relations', 'consolidation_seen', 'people', 'relation_versions', 'fact_candidates', 'forgotten', 'pictures', 'picture_entries',
]);

/** The input id of a context event id (`<turn>:user`, `<turn>:tool:<call>`, `<turn>:agent`). */
export function turnOfEvent(id: string): string {
  const i = id.indexOf(':');
  return i < 0 ? id : id.slice(0, i);
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
  /** Earlier values of the person's facts (changed since; issue 18 "Versions"). */
  earlier_values: Array<{ fact: string; sentence: string; sensitive: boolean; valid_from: string; replaced: string }>;
  /** Sensitive facts heard about the person, waiting for their yes. */
  waiting_for_yes: Array<{ id: number; fact: string; sentence: string; origin: string; time: string }>;
  /** Pictures shown to the model in the person's turns (issue 18 "Pictures"): when, from where, what they show, and the file's sha256. */
  pictures: Array<{ id: number; time: string; source: string; description: string; sha256: string }>;
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

/** An event of the context window as the document it will be archived as (for docVisible). */
function eventAsDoc(e: ContextEvent): Pick<DocRow, 'title' | 'input' | 'response' | 'speaker' | 'kind'> {
  return { title: '', input: e.input, response: e.response, speaker: e.speaker ?? null, kind: e.kind };
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
  /** Camera snapshots and images shown to the model, stored once by sha256 (issue 18 "Pictures"; pictures.ts). */
  readonly pictures: PictureStore;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly log: Logger;
  private readonly settings: SettingsAPI;
  private readonly policies = new Map<string, ToolMemoryPolicy>();
  private readonly speakers = new Set<string>();
  private readonly recalled = new Set<string>();
  /** Ids of the events of the turn in progress (its user event and what followed): never recalled into its own prompt. */
  private turnEvents = new Set<string>();
  private lastInput = '';
  private closed = false;
  /** Loop ticks in progress, by loop (runLoopOnce). */
  private readonly ticking = new Map<LoopName, Promise<Record<string, number>>>();
  /** Statements prepared once (stmt). */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly forgetListeners: Array<(r: ForgetResult) => void> = [];
  /** Turns asking to forget: their own later events (tool calls, reply) are not recorded. */
  private readonly forgetting = new Set<string>();
  /** Why the memory is full (at core.storage.memory_max_mb), or undefined while there is room. */
  private fullReason: string | undefined;
  /** Picture files whose rows the forgetting transaction in progress deleted: removed once it committed. */
  private pictureFiles: string[] = [];

  constructor(private readonly opts: MemorySystemOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
    this.settings = opts.settings;
    registerMemorySettings(opts.settings);
    if (opts.jiebaCacheDir !== undefined) setJiebaCacheDir(opts.jiebaCacheDir);
    this.db = openMemoryDb(opts.dataDir);
    this.docs = new DocStore(this.db);
    this.graph = new GraphStore(this.db);
    this.window = new ContextWindow(this.db, this.docs, (tool) => (tool ? this.policies.get(tool) : undefined), () => this.fullReason !== undefined, {
      neighbourContext: opts.recallRules?.neighbourContext !== false,
    });
    this.social = new Social(this.db, this.graph, () => this.now());
    this.pictures = new PictureStore({ db: this.db, dataDir: opts.dataDir, log: opts.log, now: () => this.now(), maxBytes: () => this.setting('core.memory.images_max_mb') * 1024 * 1024 });
    this.fixupPeople();
    // A forgetting that committed but was cut before its pages were erased (kill -9) is finished now.
    if (getMeta(this.db, 'erase_pending') === '1') this.erasePending();
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
      // A turn that asked to forget keeps none of its words (what it said names what was forgotten).
      if (this.forgetting.has(turnOfEvent(event.id))) return;
      // One spelling per person: what was said is filed under the name the household already uses.
      if (event.speaker) event = { ...event, speaker: this.social.canonicalName(event.speaker) };
      this.window.append(event);
      if (event.kind === 'user') {
        this.recalled.clear();
        this.turnEvents = new Set();
        this.lastInput = event.input;
      }
      this.turnEvents.add(event.id);
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
   * The read-only memory block of the prompt: the top of the recall ranking
   * (prepareRecall, what the LoCoMo bench measures: the question read with
   * `speaker` and the turn's time; core.memory.prompt_docs archived turns and
   * notes, or turns of the window the prompt's history does not show),
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
  async recallForPrompt(input: string, budgetTokens: number, exclude?: ReadonlySet<string>, speaker?: string, shown?: string, covered?: ReadonlySet<string>): Promise<PromptMemory> {
    try {
      // The dense channel (provider embeddings): [] when none is configured or the source is down.
      const dense = await this.dense.rank(input);
      return this.assemble(input, budgetTokens, exclude, speaker, dense, shown, covered);
    } catch (err) {
      this.log.error({ err }, 'memory recall failed');
      return { text: '', items: [] };
    }
  }

  private assemble(input: string, budgetTokens: number, exclude?: ReadonlySet<string>, speaker?: string, dense: readonly number[] = [], shown?: string, covered?: ReadonlySet<string>): PromptMemory {
    const skip = (id: string): boolean => exclude?.has(id) === true || this.recalled.has(id);
    const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();
    const seen = shown ? norm(shown) : '';
    const inPrompt = (...parts: string[]): boolean => seen !== '' && parts.some((p) => p.trim() !== '') && parts.every((p) => p.trim() === '' || seen.includes(norm(p)));
    const sections: Array<{ title: string; items: MemItem[] }> = [];
    // A window event is the prompt's history: left out when the history shows it (some of its words as the history renders
    // them, long outputs cut) and, without `shown` (the legacy layout's timeline), always.
    const inHistory = (e: ContextEvent): boolean => seen === '' || [e.input, e.response].some((p) => p.trim() !== '' && seen.includes(norm(p.slice(0, 200))));
    const minSimilarity = this.setting('core.memory.prompt_doc_min_similarity');
    // Whole turns, as the prompt's history masks them (kernel/prompt.ts maskPrivate): the answer to another
    // person's sensitive question is as private as the question, though its own words do not say so.
    const windowEvents = this.window.all().map((w) => w.event);
    const masked = maskPrivate(windowEvents, speaker);
    const privateEvents = new Set(windowEvents.filter((e, i) => masked[i] !== e).map((e) => e.id));
    const keep = (s: RecallSource): boolean => {
      if (s.kind === 'document') {
        const d = s.doc;
        if (skip(`doc:${d.id}`) || !docVisible(d, speaker) || inPrompt(d.title, d.input, d.response)) return false;
        // What the conversation summary covers comes back word for word only when close to what was said.
        return !(d.event_id && covered?.has(d.event_id)) || this.docs.similarity(input, d.id) >= minSimilarity;
      }
      const e = s.event;
      // This turn's own events are the prompt's user message (and its tool calls).
      if (skip(`event:${e.id}`) || this.turnEvents.has(e.id) || privateEvents.has(e.id) || !docVisible(eventAsDoc(e), speaker)) return false;
      if (covered?.has(e.id)) return this.window.similarity(input, e.id) >= minSimilarity;
      return !inHistory(e);
    };
    // The same ranking as every recall (prepareRecall): the question read with its speaker and the turn's time.
    const hits = this.prepareRecall({ text: input, ...(speaker ? { speaker } : {}), ...(dense.length ? { dense } : {}) }, this.setting('core.memory.prompt_docs'), { keep })();
    sections.push({
      title: '[Recalled from earlier conversations]',
      items: hits.map((h) => ({ id: h.id, kind: 'document', text: `[${stamp(h.time)}] ${h.text}`, score: h.score, time: h.time })),
    });
    // Sensitive facts the box found on its own wait for their person's yes: shown to that person only.
    const waiting = this.candidates(speaker).slice(0, 3);
    if (waiting.length > 0) {
      sections.unshift({
        title: '[Waiting for a yes] (sensitive facts heard, not stored: ask the speaker; memory_confirm keeps or drops one)',
        items: waiting.map((c) => ({ id: `candidate:${c.id}`, kind: 'relation', text: `#${c.id} ${c.subject} ${c.relation} ${c.object}`, score: 1, time: c.time })),
      });
    }
    // "What do you know about me?": a speaker talking about themselves seeds the graph with their own entity.
    const graphQuery = speaker && FIRST_PERSON.test(input) ? `${input} ${speaker}` : input;
    const g = this.graph.recall(graphQuery, this.setting('core.memory.prompt_relations'), this.setting('core.memory.bfs_depth'));
    sections.push({
      title: '[Known facts]',
      items: g.relations
        .filter((r) => !skip(`rel:${r.relation.id}`) && relationVisible(r.relation, speaker) && !inPrompt(`${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`))
        .map((r) => ({ id: `rel:${r.relation.id}`, kind: 'relation', text: `${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`, score: r.score, time: r.relation.updated })),
    });
    // "What did the camera see this morning?": the pictures of the range the words name (issue 18 "Pictures").
    if (PICTURE_WORDS.test(input)) {
      const now = this.now();
      const { range, said } = pictureRange(input, now, householdOffsetMs(this.settings, now));
      if (said) {
        sections.push({
          title: '[Pictures taken or shown then]',
          items: this.pictures
            .entriesBetween(range.from, Math.min(range.to, now + 1), 5)
            .reverse()
            .map((e) => ({ id: `picture:${e.id}`, kind: 'document', text: `[${stamp(e.time)}] ${e.source}: ${e.description}`, score: 1, time: e.time })),
        });
      }
    }
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
    for (const item of items) if (item.id.startsWith('doc:')) this.docs.touch(Number(item.id.slice(4)));
    return { text: lines.join('\n'), items };
  }

  /**
   * The recall ranking of `q` (recall.ts prepareRecall, the one every recall
   * path uses: the prompt's, doc_query's, MemoryAPI.recall's and the LoCoMo
   * bench's): the question read against now and the household's time zone
   * (plugin.home.time_zone), documents and window events ranked under any
   * weights (default DEFAULT_RANK_WEIGHTS), at most `limit` hits `opts.keep`
   * keeps. `opts.rules`: recall rules turned off for this ranking, over
   * MemorySystemOptions.recallRules (an ablation; the service passes none).
   */
  prepareRecall(q: RecallQuery, limit: number, opts: RecallOptions = {}): (weights?: Partial<RankWeights>) => RecallHit[] {
    const now = this.now();
    const sources = { docs: this.docs, window: this.window, speakersIn: (t: string) => this.speakersIn(t), now, offsetMs: householdOffsetMs(this.settings, now) };
    return prepareRecall(sources, q, limit, { ...opts, rules: { ...this.opts.recallRules, ...opts.rules } });
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
    return [...memoryTools(this), ...knowledgeTools(this.knowledge), ...pictureTools(this.pictures, this.settings, () => this.now())];
  }

  /** Register a tool's NoMemory flag and cleaner (applied to its future events). */
  registerToolMemoryPolicy(tool: string, policy: ToolMemoryPolicy): void {
    this.policies.set(tool, policy);
  }

  /** `sql` prepared once for this database (statements run on every loop item). */
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.db.prepare(sql)));
    return st;
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
   * Non-consuming recall of `query` asked by nobody in particular: the
   * prompt's ranking (prepareRecall) without its filters, at most `limit`
   * hits. `opts.weights` overrides DEFAULT_RANK_WEIGHTS. Used by tests and diagnostics.
   */
  search(query: string, limit: number, opts: { weights?: Partial<RankWeights> } = {}): RecallHit[] {
    return this.prepareRecall({ text: query }, limit, opts.weights?.depth !== undefined ? { maxDepth: opts.weights.depth } : {})(opts.weights);
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
    // The recall ranking (prepareRecall), its documents only: a window event is in the conversation already.
    const hits = this.prepareRecall({ text: query, ...(viewer ? { speaker: viewer } : {}) }, limit, { keep: (s) => s.kind === 'document' && docVisible(s.doc, viewer) })()
      .map((h) => ({ doc: this.docs.get(Number(h.id.slice('doc:'.length))) }))
      .filter((h): h is { doc: DocRow } => h.doc !== undefined);
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

  /**
   * Mark the memory full or not (the disk keeper, src/service/disk-keeper.ts,
   * at core.storage.memory_max_mb; issue 18 "what the box remembers is never
   * aged out, only capped by size"). While full: commitDocument throws
   * MemoryFullError, events leaving the context window are dropped instead
   * of archived, cold documents are not distilled into the graph. Nothing
   * already remembered is removed. `reason` undefined clears it.
   */
  setFull(reason: string | undefined): void {
    if (reason !== undefined && this.fullReason === undefined) this.log.warn({ reason }, 'memory is full: nothing new is remembered until something is forgotten or core.storage.memory_max_mb is raised');
    if (reason === undefined && this.fullReason !== undefined) this.log.info('memory has room again');
    this.fullReason = reason;
  }

  /** Why the memory is full, or undefined while there is room. */
  full(): string | undefined {
    return this.fullReason;
  }

  /** doc_commit: store a note as a document (durable when it returns), `speaker` the person who asked for it. Returns its id. Throws MemoryFullError at the size cap. */
  commitDocument(title: string, content: string, source = 'doc_commit', speaker?: string): number {
    if (this.fullReason !== undefined) throw new MemoryFullError(`memory is full (${this.fullReason}); forget something or raise core.storage.memory_max_mb`);
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
      facts_waiting_for_yes: count('SELECT count(*) FROM fact_candidates'),
      earlier_values: count('SELECT count(*) FROM relation_versions'),
      times_forgotten: count('SELECT count(*) FROM forgotten'),
      pictures: this.pictures.stats(),
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
        // The recall ranking (prepareRecall) of a question asked by no person: what is visible to anybody.
        const visible = (s: RecallSource): boolean => docVisible(s.kind === 'document' ? s.doc : eventAsDoc(s.event), null);
        for (const h of this.prepareRecall({ text: query, ...(dense.length ? { dense } : {}) }, n, { keep: visible })()) items.push({ id: h.id, kind: 'document', text: h.text, score: h.score, time: h.time });
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
      earlier_values: entity
        ? this.graph.versionsFrom(entity.id).map((v) => ({
            fact: `${v.source_name} ${v.relation_type} ${v.target_name}`,
            sentence: v.sentence,
            sensitive: v.sensitive === 1,
            valid_from: new Date(v.valid_from).toISOString(),
            replaced: new Date(v.replaced).toISOString(),
          }))
        : [],
      waiting_for_yes: this.candidates(canonical).map((c) => ({ id: c.id, fact: `${c.subject} ${c.relation} ${c.object}`, sentence: c.sentence, origin: c.origin, time: new Date(c.time).toISOString() })),
      pictures: this.pictures
        .entriesOfTurns(
          new Set([
            ...said.context_events.map((e) => turnOfEvent(String((e as Record<string, unknown>).id))),
            ...said.documents.map((d) => (d as Record<string, unknown>).event_id).filter((x): x is string => typeof x === 'string').map(turnOfEvent),
          ]),
        )
        .map((e) => ({ id: e.id, time: new Date(e.time).toISOString(), source: e.source, description: e.description, sha256: e.sha256 })),
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

  // ---- sensitive fact candidates --------------------------------------------

  /**
   * What the box would store on its own (the rule distiller, cold-document
   * distillation, its consolidation turns) that is sensitive (health, money,
   * passwords, the hidden key: src/kernel/sensitive.ts) waits as a candidate
   * until its person says yes (issue 18). Returns the triples to store now;
   * the others are kept in `fact_candidates` (`origin`: which loop).
   */
  holdSensitive(triples: readonly Triple[], origin: string): Triple[] {
    const now: Triple[] = [];
    const ins = this.stmt(
      `INSERT INTO fact_candidates(time, origin, subject, subject_type, relation, object, object_type, confidence, sentence, owner)
       VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(subject, relation, object) DO UPDATE SET time = excluded.time, sentence = excluded.sentence`,
    );
    for (const t of triples) {
      if (!(t.sensitive ?? isSensitiveText(`${t.relation} ${t.object} ${t.sentence ?? ''}`))) {
        now.push(t);
        continue;
      }
      ins.run(this.now(), origin, t.subject, t.subject_type ?? null, t.relation, t.object, t.object_type ?? null, t.confidence ?? 0.8, t.sentence ?? '', t.owner ?? t.subject);
    }
    return now;
  }

  /** The candidates `viewer` may decide on (their own), oldest first. */
  candidates(viewer: string | undefined): FactCandidate[] {
    return (this.db.prepare('SELECT id, time, origin, subject, relation, object, sentence, owner FROM fact_candidates ORDER BY id').all() as FactCandidate[]).filter((c) =>
      visibleTo(true, c.owner ?? c.subject, viewer),
    );
  }

  /**
   * The person says yes (`keep`: the fact is stored, sensitive, theirs) or
   * no (it is dropped) to candidate `id`. Throws MemoryNotFoundError when
   * there is no such candidate `viewer` may decide on (another person's is
   * never theirs to confirm). Returns the fact as stored or dropped.
   */
  confirmCandidate(id: number, keep: boolean, viewer: string | undefined): string {
    const c = this.candidates(viewer).find((x) => x.id === id);
    if (!c) throw new MemoryNotFoundError('memory_confirm', `no fact waiting for a yes with id ${id}${viewer ? ` for ${viewer}` : ''}`);
    const row = this.db.prepare('SELECT * FROM fact_candidates WHERE id = ?').get(id) as {
      subject: string; subject_type: string | null; relation: string; object: string; object_type: string | null; confidence: number; sentence: string; owner: string | null;
    };
    this.db
      .transaction(() => {
        if (keep) {
          this.graph.commit(
            [{ subject: row.subject, relation: row.relation, object: row.object, ...(row.subject_type ? { subject_type: row.subject_type } : {}), ...(row.object_type ? { object_type: row.object_type } : {}), confidence: row.confidence, sentence: row.sentence, owner: row.owner ?? row.subject, sensitive: true }],
            this.now(),
          );
        }
        this.db.prepare('DELETE FROM fact_candidates WHERE id = ?').run(id);
      })
      .immediate();
    return `${row.subject} ${row.relation} ${row.object}`;
  }

  // ---- forgetting ----------------------------------------------------------

  /** Also tell `fn` (synchronously, before forget returns) what was forgotten; see MemorySystemOptions.onForgotten. */
  addForgetListener(fn: (r: ForgetResult) => void): void {
    this.forgetListeners.push(fn);
  }

  /** Whether `turn` asked to forget (its events are not recorded; the run log tombstones them when it ends). */
  isForgetting(turn: string): boolean {
    return this.forgetting.has(turn);
  }

  /** The turn has ended and its run-log events were tombstoned. */
  doneForgetting(turn: string): void {
    this.forgetting.delete(turn);
    try {
      setMeta(this.db, 'forgetting_turns', JSON.stringify([...this.forgetting]));
    } catch (err) {
      this.log.warn({ err }, 'could not record the turns still forgetting');
    }
  }

  /**
   * Asking turns a previous process did not see end (it stopped or was
   * killed mid-turn): the service tombstones their run-log events at start,
   * then calls doneForgetting for each. Input ids only.
   */
  unfinishedForgetting(): string[] {
    try {
      const v: unknown = JSON.parse(getMeta(this.db, 'forgetting_turns') ?? '[]');
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  }

  /**
   * Forget for real (issue 18): every turn whose words hold all of the
   * content words of `about` (or the entity's name), whole — its user
   * event, tool calls and reply — from the context window and the
   * documents (with their index postings, and the neighbours' vectors
   * re-made from their own text); every fact, earlier version and candidate
   * that says it, the entities left with no fact (people excepted), the
   * rule queue's utterances and the merge bookkeeping naming them. `turns`
   * are forgotten whole too (the asking turn itself: its later events are
   * never recorded). `by` (a tool call): the person asking forgets what is
   * theirs or nobody's in particular; another person's turns and facts are
   * left (counted in `withheld`), and only a person can have themselves
   * forgotten (MemoryArgumentError). All in one IMMEDIATE transaction, inside which
   * `onForgotten` and the forget listeners remove it from the other stores
   * before it commits; then the file is vacuumed and the WAL truncated, and
   * only then it returns (acknowledged). Throws MemoryArgumentError when nothing names what to forget,
   * MemoryNotFoundError for an unknown entity.
   */
  forget(req: ForgetRequest, by?: { speaker: string | undefined }): ForgetResult {
    const words = req.about !== undefined ? forgetWords(req.about) : [];
    const wordSets: string[][] = words.length > 0 ? [words] : [];
    const entity = req.entity !== undefined ? this.graph.resolve(req.entity) : undefined;
    if (req.entity !== undefined && !entity) {
      // The asking turn names what it wanted forgotten: it is not kept, found or not.
      if ((req.turns ?? []).length > 0) this.forget({ turns: req.turns ?? [] }, by);
      throw new MemoryNotFoundError(req.entity !== undefined && req.about === undefined ? 'memory_delete_entity' : 'memory_forget', `no entity "${req.entity.trim()}"`);
    }
    // A person forgets what is theirs (or nobody's in particular); another person's words and facts are theirs to forget.
    const allowed = (owner: string | null | undefined): boolean => {
      if (!by || owner === null || owner === undefined || owner === '') return true;
      const o = personKey(owner);
      // Only the household's people own what they said and what is about them; a fact about a thing is anyone's to forget.
      return o === personKey(UNKNOWN_SPEAKER) || o === personKey(by.speaker ?? UNKNOWN_SPEAKER) || !this.social.isPerson(owner);
    };
    if (entity && this.social.isPerson(entity.name) && !allowed(entity.name)) {
      throw new MemoryArgumentError('memory_forget', `only ${entity.name} can have ${entity.name} forgotten`);
    }
    if (entity) {
      const names = [entity.name, ...(this.db.prepare('SELECT alias FROM aliases WHERE entity_id = ?').pluck().all(entity.id) as string[])];
      for (const n of names) if (wordsOf(n).length > 0) wordSets.push(wordsOf(n));
    }
    for (const t of req.turns ?? []) this.forgetting.add(t);
    // Without the service (nobody calls doneForgetting) the set stays bounded: the oldest asking turns are long over.
    for (const t of this.forgetting) if (this.forgetting.size > 1000) this.forgetting.delete(t);
    if (wordSets.length === 0 && (req.turns ?? []).length === 0) {
      throw new MemoryArgumentError('memory_forget', 'say what to forget: "about" with the words of the fact (e.g. "my bike lock code"), or an entity');
    }
    const matches = (text: string): boolean => wordSets.some((w) => mentionsAll(text, w));
    const at = this.now();
    let result!: ForgetResult;
    // The knowledge base's user documents first (files, not in the transaction): a crash after leaves more forgotten, never less.
    const knowledgeTexts = wordSets.length > 0 ? this.knowledge.forget(matches) : [];
    try {
      result = this.db
        .transaction(() => {
          const r = this.forgetInTransaction(matches, new Set(req.turns ?? []), entity?.id, at, knowledgeTexts, allowed);
          setMeta(this.db, 'erase_pending', '1');
          // The asking turns (ids only) until the run log has tombstoned their last events (doneForgetting), across a crash.
          setMeta(this.db, 'forgetting_turns', JSON.stringify([...this.forgetting]));
          // The other stores forget first, before this commit: a crash between them leaves the memory remembering
          // (asked again, it forgets again), never a memory that forgot with a run log that did not.
          this.opts.onForgotten?.(r);
          for (const l of this.forgetListeners) l(r);
          return r;
        })
        .immediate();
    } catch (err) {
      this.pictureFiles = [];
      this.window.load();
      throw err;
    }
    // Committed: the files of the pictures nothing refers to any more (a crash before this: prune removes them as orphans).
    this.pictures.removeFiles(this.pictureFiles);
    this.pictureFiles = [];
    this.recalled.clear();
    if (matches(this.lastInput)) this.lastInput = '';
    result.checkpointed = this.erasePending();
    this.log.info({ events: result.events, documents: result.documents, relations: result.relations, entities: result.entities, turns: result.turns.length }, 'forgotten');
    return result;
  }

  /**
   * After forgetting committed: rewrite the file's pages and empty the WAL
   * (eraseFreedPages), then clear meta `erase_pending` (set in the forgetting
   * transaction; a store opened with it set — a crash came between — is
   * erased when it opens). Returns whether the WAL was emptied.
   */
  private erasePending(): boolean {
    eraseFreedPages(this.db);
    setMeta(this.db, 'erase_pending', '0');
    return eraseFreedPages(this.db, false);
  }

  private forgetInTransaction(
    matches: (text: string) => boolean,
    asked: Set<string>,
    entityId: number | undefined,
    at: number,
    knowledgeTexts: readonly string[],
    allowed: (owner: string | null | undefined) => boolean,
  ): ForgetResult {
    const db = this.db;
    const texts: string[] = [...knowledgeTexts];
    let withheld = 0;
    type D = { id: number; event_id: string | null; kind: string; title: string; input: string; response: string; speaker: string | null };
    const allDocs = db.prepare('SELECT id, event_id, kind, title, input, response, speaker FROM docs').all() as D[];
    // Whose each turn is: the speaker of its user event (window or archived).
    const ownerOf = new Map<string, string | null>();
    for (const e of this.window.all()) if (e.event.kind === 'user' || e.event.kind === 'cold_storage') ownerOf.set(turnOfEvent(e.event.id), e.event.speaker ?? null);
    for (const d of allDocs) if (d.event_id !== null && (d.kind === 'user' || d.kind === 'cold_storage')) ownerOf.set(turnOfEvent(d.event_id), d.speaker);
    const turns = new Set(asked);
    const found = new Set<string>();
    for (const e of this.window.all()) if (matches(`${e.event.input}\n${e.event.response}`)) found.add(turnOfEvent(e.event.id));
    for (const d of allDocs) if (matches(`${d.title}\n${d.input}\n${d.response}`) && d.event_id) found.add(turnOfEvent(d.event_id));
    for (const t of found) {
      if (asked.has(t) || allowed(ownerOf.get(t))) turns.add(t);
      else withheld++;
    }
    const docIds = new Set<number>();
    for (const d of allDocs) {
      const inTurn = d.event_id !== null && turns.has(turnOfEvent(d.event_id));
      const own = d.event_id === null || !ownerOf.has(turnOfEvent(d.event_id)) ? allowed(d.speaker) : turns.has(turnOfEvent(d.event_id));
      if (inTurn || (matches(`${d.title}\n${d.input}\n${d.response}`) && own)) {
        docIds.add(d.id);
        if (d.kind !== 'tool') texts.push(d.title, d.input, d.kind === 'agent' ? '' : d.response);
      }
    }
    const eventIds = new Set<string>();
    for (const e of this.window.all()) {
      if (!turns.has(turnOfEvent(e.event.id))) continue;
      eventIds.add(e.event.id);
      if (e.event.kind === 'user' || e.event.kind === 'cold_storage') texts.push(e.event.input, e.event.response);
    }
    // Pictures: the entries of the forgotten turns and those whose description says it; their files when nothing else refers to them.
    const pics = this.pictures.forgetInTransaction(turns, matches);
    this.pictureFiles = pics.files;
    texts.push(...pics.descriptions);
    const inputs = new Set(texts.filter((t) => t.trim() !== '').map((t) => t.slice(0, 300)));
    // The graph: facts that say it, that came from a forgotten document or sentence, or (an entity) touch it.
    type R = { id: number; source: number; target: number; relation_type: string; sentence: string; s: string; t: string; owner: string | null; doc_id: number | null };
    const rels = db
      .prepare(
        'SELECT r.id, r.source, r.target, r.relation_type, r.sentence, r.owner, r.doc_id, s.name AS s, t.name AS t FROM relations r JOIN entities s ON s.id = r.source JOIN entities t ON t.id = r.target',
      )
      .all() as R[];
    const relGone = rels.filter((r) => {
      const hit =
        matches(`${r.s} ${r.relation_type} ${r.t}\n${r.sentence}`) ||
        (r.sentence !== '' && inputs.has(r.sentence)) ||
        (r.doc_id !== null && docIds.has(r.doc_id)) ||
        (entityId !== undefined && (r.source === entityId || r.target === entityId));
      if (hit && !allowed(r.owner ?? r.s)) withheld++;
      return hit && allowed(r.owner ?? r.s);
    });
    for (const r of relGone) texts.push(r.relation_type, r.t, r.sentence);
    type V = { id: number; relation_id: number | null; source: number; relation_type: string; target_name: string; sentence: string; owner: string | null; s: string | null };
    const versions = (
      db.prepare('SELECT v.id, v.relation_id, v.source, v.relation_type, v.target_name, v.sentence, v.owner, e.name AS s FROM relation_versions v LEFT JOIN entities e ON e.id = v.source').all() as V[]
    ).filter((v) => allowed(v.owner ?? v.s));
    const goneIds = new Set(relGone.map((r) => r.id));
    const goneKeys = new Set(relGone.map((r) => `${r.source}\u0000${r.relation_type}`));
    const versionsGone = versions.filter(
      (v) =>
        (v.relation_id !== null && goneIds.has(v.relation_id)) ||
        goneKeys.has(`${v.source}\u0000${v.relation_type}`) ||
        matches(`${v.relation_type} ${v.target_name}\n${v.sentence}`) ||
        (v.sentence !== '' && inputs.has(v.sentence)) ||
        (entityId !== undefined && v.source === entityId),
    );
    for (const v of versionsGone) texts.push(v.target_name, v.sentence);
    type C = { id: number; subject: string; relation: string; object: string; sentence: string; owner: string | null };
    const candidates = (db.prepare('SELECT id, subject, relation, object, sentence, owner FROM fact_candidates').all() as C[]).filter(
      (c) => (matches(`${c.subject} ${c.relation} ${c.object}\n${c.sentence}`) || (c.sentence !== '' && inputs.has(c.sentence))) && allowed(c.owner ?? c.subject),
    );
    for (const c of candidates) texts.push(c.object, c.sentence);
    // Delete.
    const events = this.window.remove(eventIds);
    for (const id of docIds) this.docs.remove(id);
    const delRel = db.prepare('DELETE FROM relations WHERE id = ?');
    for (const r of relGone) delRel.run(r.id);
    const delVersion = db.prepare('DELETE FROM relation_versions WHERE id = ?');
    for (const v of versionsGone) delVersion.run(v.id);
    const delCandidate = db.prepare('DELETE FROM fact_candidates WHERE id = ?');
    for (const c of candidates) delCandidate.run(c.id);
    const queued = (db.prepare('SELECT seq, text, speaker FROM rule_queue').all() as Array<{ seq: number; text: string; speaker: string | null }>).filter(
      (r) => (matches(r.text) || inputs.has(r.text.slice(0, 300))) && allowed(r.speaker),
    );
    for (const r of queued) db.prepare('DELETE FROM rule_queue WHERE seq = ?').run(r.seq);
    // Entities: the one named, and those a forgotten fact leaves with none (people stay: they are the household).
    const ends = new Set<number>(relGone.flatMap((r) => [r.source, r.target]));
    // An earlier value's entity (left with no fact when the value changed) goes with the version.
    for (const v of versionsGone) {
      const e = this.graph.resolve(v.target_name);
      if (e) ends.add(e.id);
    }
    if (entityId !== undefined) ends.add(entityId);
    let entities = 0;
    const used = db.prepare('SELECT 1 FROM relations WHERE source = ? OR target = ? LIMIT 1');
    for (const id of ends) {
      const e = this.graph.byId(id);
      if (!e) continue;
      const named = id === entityId;
      if (used.get(id, id) && (!named || withheld > 0)) continue;
      if (!named && this.social.isPerson(e.name)) continue;
      if (named && this.social.isPerson(e.name)) db.prepare('DELETE FROM people WHERE name = ?').run(e.name);
      texts.push(e.name);
      db.prepare('DELETE FROM relations WHERE source = ? OR target = ?').run(id, id);
      db.prepare('DELETE FROM entity_terms WHERE entity_id = ?').run(id);
      db.prepare('DELETE FROM aliases WHERE entity_id = ?').run(id);
      db.prepare('DELETE FROM entities WHERE id = ?').run(id);
      db.prepare('DELETE FROM relation_versions WHERE source = ?').run(id);
      entities++;
    }
    // Rare words: what the forgotten texts said that nothing remaining says.
    const rareWords = candidateRareWords(texts).filter((w) => !this.stillSaid(w));
    // Neighbours' vectors held the forgotten turns' words (folded in at archive time): re-made from their own text.
    const again = new Set<number>();
    for (const t of new Set(terms(rareWords.join(' ')))) for (const id of this.docs.withTerm(t, 500)) again.add(id);
    for (const id of again) this.docs.reindexOwn(id);
    this.docs.dropUnusedTerms();
    for (const k of db.prepare('SELECT key FROM consolidation_seen').pluck().all() as string[]) {
      if (mentionsAny(k, rareWords) || matches(k)) db.prepare('DELETE FROM consolidation_seen WHERE key = ?').run(k);
    }
    for (const a of db.prepare('SELECT alias FROM aliases').pluck().all() as string[]) if (mentionsAny(a, rareWords)) db.prepare('DELETE FROM aliases WHERE alias = ?').run(a);
    // The safety net: a row of a table added later that still names a rare word, or points at a forgotten document or event, goes too.
    sweepTables(db, rareWords, FORGET_SWEEP_SKIP);
    sweepReferences(db, docIds, new Set([...eventIds, ...allDocs.filter((d) => docIds.has(d.id) && d.event_id !== null).map((d) => d.event_id!)]), FORGET_SWEEP_SKIP);
    const items = events + docIds.size + relGone.length + entities + versionsGone.length + candidates.length + queued.length + knowledgeTexts.length + pics.entries;
    db.prepare('INSERT INTO forgotten(time, items) VALUES(?, ?)').run(at, items);
    const archivedIds = allDocs.filter((d) => docIds.has(d.id) && d.event_id !== null).map((d) => d.event_id!);
    return {
      at,
      events,
      documents: docIds.size,
      relations: relGone.length,
      entities,
      versions: versionsGone.length,
      candidates: candidates.length,
      queued: queued.length,
      knowledge: knowledgeTexts.length,
      pictures: pics.entries,
      withheld,
      turns: [...turns],
      eventIds: [...new Set([...eventIds, ...archivedIds])],
      rareWords,
      checkpointed: false,
    };
  }

  /** Whether anything the memory keeps still says `word` (a whole word). */
  private stillSaid(word: string): boolean {
    const like = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const test = wordTest(word);
    const places: Array<[string, string]> = [
      ['docs', "title || ' ' || input || ' ' || response"],
      ['context_events', "input || ' ' || response"],
      ['relations', 'sentence || \' \' || relation_type'],
      ['entities', 'name'],
      ['relation_versions', "target_name || ' ' || sentence"],
      ['fact_candidates', "object || ' ' || sentence"],
      ['rule_queue', 'text'],
      ['picture_entries', 'description'],
    ];
    for (const [table, expr] of places) {
      const rows = this.db.prepare(`SELECT ${expr} FROM ${table} WHERE ${expr} LIKE ? ESCAPE '\\' LIMIT 50`).pluck().all(like) as string[];
      if (rows.some((r) => test.test(r))) return true;
    }
    return false;
  }

  // ---- heartbeat loops ----------------------------------------------------

  /**
   * Run one tick of a loop now. Errors are logged, never thrown. Resolves
   * with what the tick did ({closed: 1} after close()). A tick of a loop
   * whose tick is still running is that same tick (the rules and archive
   * ticks yield to the event loop between items, so a second one could
   * otherwise take the same items).
   */
  runLoopOnce(name: LoopName): Promise<Record<string, number>> {
    const running = this.ticking.get(name);
    if (running) return running;
    const p = this.runTick(name).finally(() => this.ticking.delete(name));
    this.ticking.set(name, p);
    return p;
  }

  private async runTick(name: LoopName): Promise<Record<string, number>> {
    if (this.closed) return { closed: 1 };
    try {
      switch (name) {
        case 'distill':
          return this.tickDistill();
        case 'archive':
          return await this.tickArchive();
        case 'merge':
          return this.tickMerge();
        case 'review':
          return this.tickReview();
        case 'rules':
          return await this.tickRules();
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

  /**
   * Distil cold documents into the graph, one document a transaction,
   * yielding to the event loop between them (TimeSlice). A document forgotten
   * or distilled meanwhile is skipped: it is read again inside its transaction.
   */
  private async tickArchive(): Promise<Record<string, number>> {
    if (this.fullReason !== undefined) return { full: 1 };
    const now = this.now();
    this.docs.flushAccess(now);
    const before = now - this.setting('core.memory.cold_doc_hours') * 3_600_000;
    const cold = this.docs.cold(before, this.setting('core.memory.cold_doc_max_access'), 500);
    const slice = new TimeSlice(this.opts.sliceBudgetMs);
    let relations = 0;
    let done = 0;
    for (const { id } of cold) {
      await slice.pace();
      if (this.closed) return { cold: done, relations, closed: 1 };
      this.db
        .transaction(() => {
          const d = this.docs.undistilled(id);
          if (!d) return;
          const text = [d.title, d.input, d.response].filter((x) => x !== '').join('\n');
          const triples = this.holdSensitive(d.kind === 'agent' ? [] : docToTriples(text, d.speaker ?? undefined), 'archive');
          if (triples.length > 0) relations += this.graph.commit(triples, this.now(), d.id).relations;
          this.docs.markDistilled(d.id);
          done++;
        })
        .immediate();
    }
    return { cold: done, relations };
  }

  /**
   * Distil queued utterances (the rule distiller), one a transaction,
   * yielding to the event loop between them (TimeSlice). An utterance
   * forgotten meanwhile is no longer queued and is skipped: its row is
   * deleted first, and only a row that was still there is distilled.
   */
  private async tickRules(): Promise<Record<string, number>> {
    const rows = this.db.prepare('SELECT seq, speaker, text FROM rule_queue ORDER BY seq LIMIT 1000').all() as Array<{ seq: number; speaker: string | null; text: string }>;
    const slice = new TimeSlice(this.opts.sliceBudgetMs);
    let relations = 0;
    let done = 0;
    for (const r of rows) {
      await slice.pace();
      if (this.closed) return { utterances: done, relations, closed: 1 };
      this.db
        .transaction(() => {
          if (this.stmt('DELETE FROM rule_queue WHERE seq = ?').run(r.seq).changes === 0) return;
          const triples = this.holdSensitive(ruleTriples(r.text, r.speaker ?? undefined), 'rules');
          if (triples.length > 0) relations += this.graph.commit(triples, this.now()).relations;
          done++;
        })
        .immediate();
    }
    return { utterances: done, relations };
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
