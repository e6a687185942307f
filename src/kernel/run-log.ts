/**
 * Append-only run log (seed 002 §3 "事件溯源会话"): every input, projected
 * context, LLM request and response, tool call, output and the turn's end is
 * an event with a monotonic sequence number. The model-visible context of any
 * LLM round of a turn can be rebuilt from the log alone (`deriveContext`,
 * seed 002 §3.2 "模型可见即可重建"). Interrupted turns are logged as
 * interrupted, never as finished. Images are logged as `sha256:<hex>`
 * references to the picture store (src/kernel/turn-subscribers.ts
 * withImageRefs; issue 18 "Pictures"), so a rebuilt context names its images
 * by hash rather than holding a second copy of their bytes.
 *
 * Storage: SQLite `runlog.db` in the data directory (WAL), one row per event.
 */
import Database from 'better-sqlite3';
import { WAL_SIZE_LIMIT, migrateSqlite, type OpenStoreOptions, type SqliteStoreSpec } from './store-version.js';
import type { ChatMessage } from './llm-types.js';
import type { TurnEvent } from './turn-events.js';
import type { CompactionEvent } from './compaction.js';

/**
 * One run-log event: every turn event (src/kernel/turn-events.ts) but the
 * live-only `llm.delta`, and the start and end of a compaction of the prompt
 * history (src/kernel/compaction.ts, seed 002 §7). `turn` is the input id.
 * Logs written before issue 13 hold the same types with fewer fields (no
 * durations, `turn.finished` with `status` and `reply` only); readers take
 * what they need.
 */
export type RunEvent = Exclude<TurnEvent, { type: 'llm.delta' }> | CompactionEvent | RunTombstone;

/**
 * What stands where a forgotten event was (issue 18 "Forgetting for real"):
 * which kind of event it was and when it was deleted, none of its text. A
 * turn holding one is tombstoned: its context can no longer be rebuilt
 * (`deriveContext` says so with {@link TOMBSTONED}).
 */
export interface RunTombstone {
  type: 'tombstone';
  turn: string;
  /** The type of the event that was here. */
  of: string;
  /** When it was deleted, ms since epoch. */
  deleted_at: number;
}

/** What `deriveContext` returns for a round whose context held a forgotten event. */
export const TOMBSTONED = 'tombstoned' as const;

/** Whether a turn's events hold a tombstone (something of it was forgotten). */
export function isTombstoned(events: readonly StoredRunEvent[]): boolean {
  return events.some((e) => e.type === 'tombstone');
}

/** A string holds one of `words` as a whole word (Chinese: as a substring), case-insensitive. */
function holdsWord(text: string, words: readonly string[]): boolean {
  const t = text.normalize('NFKC').replace(/’/g, "'");
  return words.some((w) =>
    /^\p{Script=Han}/u.test(w) ? t.includes(w) : new RegExp(`(?:^|[^\\p{L}\\p{N}])${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|[^\\p{L}\\p{N}])`, 'iu').test(t),
  );
}

/** A stored event with its sequence number and time (ms since epoch). */
export type StoredRunEvent = RunEvent & { seq: number; at: number };

/** Where run events go. */
export interface RunLog {
  append(ev: RunEvent): void;
  /** Every event of `turn`, in order. */
  turn(turn: string): StoredRunEvent[];
  /** The last `limit` events, in order; none when `limit` < 1. */
  tail(limit: number): StoredRunEvent[];
  /** The last `limit` events whose type is one of `types`, in order; none when `limit` < 1. */
  ofTypes(types: readonly string[], limit: number): StoredRunEvent[];
  /**
   * Forgetting (issue 18): replace every event of `turns`, and every other
   * event whose text holds one of `words` (whole words, case-insensitive),
   * by a tombstone (RunTombstone, `deleted_at` = `at`). Durable and gone
   * from the file's bytes when it returns (SQLite: secure_delete, VACUUM,
   * WAL truncated). Returns how many events were tombstoned.
   */
  forget(turns: readonly string[], words: readonly string[], at: number): number;
  /**
   * Bound the log (issue 18 "Nothing grows without bound"): remove whole
   * turns, oldest first, while the oldest is older than `before` (ms since
   * epoch; 0 = no age limit) or the log uses more than `maxBytes` (0 = no
   * size limit), at most `maxTurns` turns per call (the caller calls again
   * while `more` is true, between turns, so a large prune never holds the
   * event loop). The compaction events in force (the last summary and what
   * started after it, src/kernel/compaction.ts restoreCompaction) are kept.
   * Freed pages are reused by later events, so the file stops growing at the
   * bound without a VACUUM.
   */
  prune(opts: { before: number; maxBytes: number; maxTurns?: number }): { turns: number; events: number; more: boolean };
  /** Bytes the log's events use (SQLite: pages in use, free pages excluded; in memory: their JSON). */
  usedBytes(): number;
  close(): void;
}

/** The compaction events a prune keeps: every compaction event from the start of the summary in force on. */
function keepCompactionFrom(events: readonly StoredRunEvent[]): number {
  let finished: string | undefined;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'compaction.finished' && e.status !== 'abandoned') {
      finished = e.compaction;
      break;
    }
  }
  if (finished === undefined) return events.length > 0 ? events[0]!.seq : Number.POSITIVE_INFINITY;
  const start = events.find((e) => e.type === 'compaction.started' && e.compaction === finished);
  return start ? start.seq : events[0]!.seq;
}

const COMPACTION_TYPES = ['compaction.started', 'compaction.finished'] as const;

/** In-memory run log (tests; the kernel's default when no data directory log is wired). */
export class MemoryRunLog implements RunLog {
  private readonly events: StoredRunEvent[] = [];
  constructor(private readonly max = 10000) {}
  append(ev: RunEvent): void {
    this.events.push({ ...structuredClone(ev), seq: this.events.length ? this.events[this.events.length - 1]!.seq + 1 : 1, at: Date.now() });
    if (this.events.length > this.max) this.events.shift();
  }
  /** Copies, like SqliteRunLog's (a caller changing one does not change the log). */
  turn(turn: string): StoredRunEvent[] {
    return structuredClone(this.events.filter((e) => e.turn === turn));
  }
  tail(limit: number): StoredRunEvent[] {
    return limit > 0 ? structuredClone(this.events.slice(-limit)) : [];
  }
  ofTypes(types: readonly string[], limit: number): StoredRunEvent[] {
    return limit > 0 ? structuredClone(this.events.filter((e) => types.includes(e.type)).slice(-limit)) : [];
  }

  forget(turns: readonly string[], words: readonly string[], at: number): number {
    const ids = new Set(turns);
    let n = 0;
    this.events.forEach((e, i) => {
      if (e.type === 'tombstone' || (!ids.has(e.turn) && !(words.length > 0 && holdsWord(JSON.stringify(e), words)))) return;
      this.events[i] = { type: 'tombstone', turn: e.turn, of: e.type, deleted_at: at, seq: e.seq, at: e.at };
      n++;
    });
    return n;
  }

  prune(opts: { before: number; maxBytes: number; maxTurns?: number }): { turns: number; events: number; more: boolean } {
    const keepFrom = keepCompactionFrom(this.events.filter((e) => (COMPACTION_TYPES as readonly string[]).includes(e.type)));
    const kept = (e: StoredRunEvent): boolean => (COMPACTION_TYPES as readonly string[]).includes(e.type) && e.seq >= keepFrom;
    let turns = 0;
    let events = 0;
    const limit = opts.maxTurns ?? 200;
    for (;;) {
      const oldest = this.events.find((e) => !kept(e));
      if (!oldest) return { turns, events, more: false };
      const tooOld = opts.before > 0 && oldest.at < opts.before;
      const tooBig = opts.maxBytes > 0 && this.usedBytes() > opts.maxBytes;
      if (!tooOld && !tooBig) return { turns, events, more: false };
      if (turns >= limit) return { turns, events, more: true };
      const before = this.events.length;
      for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i]!.turn === oldest.turn && !kept(this.events[i]!)) this.events.splice(i, 1);
      events += before - this.events.length;
      turns++;
    }
  }
  usedBytes(): number {
    return this.events.reduce((n, e) => n + JSON.stringify(e).length, 0);
  }
  close(): void {}
}

const RUN_LOG_SCHEMA =
  'CREATE TABLE IF NOT EXISTS run_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, turn TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL); CREATE INDEX IF NOT EXISTS run_events_turn ON run_events(turn, seq);';
const RUN_LOG_TYPE_INDEX = 'CREATE INDEX IF NOT EXISTS run_events_type ON run_events(type, seq);';

/**
 * The run log store's versions (`PRAGMA user_version`, src/kernel/store-version.ts):
 * - 0: the unversioned `run_events` table of commit e216bba (one row per event, `body` the event's JSON);
 * - 1: the same table, versioned.
 * An index on (type, seq) (the last compaction is found at start without reading the log, issue 19) is made
 * when absent on every open: an older release reads a store that has it unchanged, so it is no new version.
 */
export const RUN_LOG_STORE: SqliteStoreSpec = {
  store: 'runlog',
  version: 1,
  create: (db) => db.exec(RUN_LOG_SCHEMA),
  migrations: [{ to: 1, description: 'adopt schema versions (run_events as in e216bba)', up: (db) => db.exec(RUN_LOG_SCHEMA) }],
};

/** SQLite run log. */
export class SqliteRunLog implements RunLog {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  /**
   * Open (creating when absent) the log at `path` (`:memory:` for a throwaway
   * one), migrating an older store first (RUN_LOG_STORE; a copy is kept under
   * `<dataDir>/backups/pre-migration`, `dataDir` defaulting to the file's
   * directory). Throws StoreTooNewError / StoreMigrationError
   * (src/kernel/store-version.ts) or the better-sqlite3 error.
   */
  constructor(
    private readonly file: string,
    opts: OpenStoreOptions & { dataDir?: string } = {},
  ) {
    const path = file;
    this.db = new Database(path);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      // The WAL is checkpointed every 1 MB and cut back to 1 MB (issue 18: the log's files stay near core.storage.runlog_max_mb).
      this.db.pragma('wal_autocheckpoint = 256');
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
      // Forgetting for real (issue 18): what is replaced by a tombstone is overwritten with zeros.
      this.db.pragma('secure_delete = ON');
      migrateSqlite(this.db, RUN_LOG_STORE, { file: path, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) }, opts);
      this.db.exec(RUN_LOG_TYPE_INDEX);
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.insert = this.db.prepare('INSERT INTO run_events (at, turn, type, body) VALUES (?, ?, ?, ?)');
  }
  append(ev: RunEvent): void {
    this.insert.run(Date.now(), ev.turn, ev.type, JSON.stringify(ev));
  }
  turn(turn: string): StoredRunEvent[] {
    const rows = this.db.prepare('SELECT seq, at, body FROM run_events WHERE turn = ? ORDER BY seq').all(turn) as Array<{ seq: number; at: number; body: string }>;
    return rows.map((r) => ({ ...(JSON.parse(r.body) as RunEvent), seq: r.seq, at: r.at }));
  }
  tail(limit: number): StoredRunEvent[] {
    // SQLite reads a negative LIMIT as "no limit": a limit below 1 is no events, as in MemoryRunLog.
    if (!(limit > 0)) return [];
    const rows = this.db.prepare('SELECT seq, at, body FROM run_events ORDER BY seq DESC LIMIT ?').all(limit) as Array<{ seq: number; at: number; body: string }>;
    return rows.reverse().map((r) => ({ ...(JSON.parse(r.body) as RunEvent), seq: r.seq, at: r.at }));
  }
  ofTypes(types: readonly string[], limit: number): StoredRunEvent[] {
    if (!(limit > 0) || types.length === 0) return [];
    const rows = this.db.prepare(`SELECT seq, at, body FROM run_events WHERE type IN (${types.map(() => '?').join(', ')}) ORDER BY seq DESC LIMIT ?`).all(...types, limit) as Array<{ seq: number; at: number; body: string }>;
    return rows.reverse().map((r) => ({ ...(JSON.parse(r.body) as RunEvent), seq: r.seq, at: r.at }));
  }

  forget(turns: readonly string[], words: readonly string[], at: number): number {
    const hits = new Map<number, { turn: string; type: string }>();
    const byTurn = this.db.prepare('SELECT seq, turn, type FROM run_events WHERE turn = ? AND type != ?');
    for (const t of turns) for (const r of byTurn.all(t, 'tombstone') as Array<{ seq: number; turn: string; type: string }>) hits.set(r.seq, r);
    // LIKE finds candidates in one pass over the log (ASCII case-insensitive); the word test decides.
    if (words.length > 0) {
      const where = words.map(() => "body LIKE ? ESCAPE '\\'").join(' OR ');
      const rows = this.db
        .prepare(`SELECT seq, turn, type, body FROM run_events WHERE type != 'tombstone' AND (${where})`)
        .all(...words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)) as Array<{ seq: number; turn: string; type: string; body: string }>;
      for (const r of rows) if (holdsWord(r.body, words)) hits.set(r.seq, r);
    }
    const upd = this.db.prepare("UPDATE run_events SET type = 'tombstone', body = ? WHERE seq = ?");
    this.db.transaction(() => {
      for (const [seq, r] of hits) upd.run(JSON.stringify({ type: 'tombstone', turn: r.turn, of: r.type, deleted_at: at } satisfies RunTombstone), seq);
    }).immediate();
    if (hits.size > 0 && this.file !== ':memory:') {
      this.db.exec('VACUUM');
      for (let i = 0; i < 40; i++) {
        const c = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        if (!c[0] || c[0].busy === 0) break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      }
    }
    return hits.size;
  }

  prune(opts: { before: number; maxBytes: number; maxTurns?: number }): { turns: number; events: number; more: boolean } {
    const compactions = this.db
      .prepare(`SELECT seq, at, body FROM run_events WHERE type IN ('compaction.started', 'compaction.finished') ORDER BY seq`)
      .all() as Array<{ seq: number; at: number; body: string }>;
    const keepFrom = keepCompactionFrom(compactions.map((r) => ({ ...(JSON.parse(r.body) as RunEvent), seq: r.seq, at: r.at })));
    const oldestStmt = this.db.prepare(`SELECT turn, at FROM run_events WHERE NOT (type IN ('compaction.started', 'compaction.finished') AND seq >= ?) ORDER BY seq LIMIT 1`);
    const del = this.db.prepare(`DELETE FROM run_events WHERE turn = ? AND NOT (type IN ('compaction.started', 'compaction.finished') AND seq >= ?)`);
    const limit = opts.maxTurns ?? 200;
    let turns = 0;
    let events = 0;
    let more = false;
    this.db
      .transaction(() => {
        for (;;) {
          const oldest = oldestStmt.get(keepFrom) as { turn: string; at: number } | undefined;
          if (!oldest) return;
          const tooOld = opts.before > 0 && oldest.at < opts.before;
          const tooBig = opts.maxBytes > 0 && this.usedBytes() > opts.maxBytes;
          if (!tooOld && !tooBig) return;
          if (turns >= limit) {
            more = true;
            return;
          }
          events += del.run(oldest.turn, keepFrom).changes;
          turns++;
        }
      })
      .immediate();
    return { turns, events, more };
  }

  usedBytes(): number {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const size = this.db.pragma('page_size', { simple: true }) as number;
    return (pages - free) * size;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Rebuild the messages the model saw in `round` (1-based) of a turn from its
 * events: the last projection before that request plus every appended delta.
 * A round requested more than once (its call was cut by a preemption and
 * re-issued on resume) has several requests: `occurrence` picks one (0-based;
 * default: the last, whose response the turn used). Returns undefined when
 * the log has no such request, and TOMBSTONED when something of the turn
 * was forgotten (issue 18): its context cannot be rebuilt, and the log says
 * so rather than rebuilding a context the model never saw.
 */
export function deriveContext(events: StoredRunEvent[], round: number, occurrence?: number): ChatMessage[] | typeof TOMBSTONED | undefined {
  if (isTombstoned(events)) return TOMBSTONED;
  let messages: ChatMessage[] | undefined;
  const found: ChatMessage[][] = [];
  for (const e of events) {
    if (e.type === 'context.projected') messages = structuredClone(e.messages);
    else if (e.type === 'llm.requested') {
      if (!messages) return undefined;
      messages.push(...structuredClone(e.appended));
      if (e.round === round) found.push(structuredClone(messages));
    }
  }
  return occurrence === undefined ? found[found.length - 1] : found[occurrence];
}

/**
 * Tracks what of a turn's message list is already in the log, so each LLM
 * request logs only what was appended — or a new projection when a stage
 * rewrote earlier messages.
 */
export class ProjectionTracker {
  private logged: string[] = [];
  /** Events to log before an LLM request with `messages`. */
  before(turn: string, round: number, messages: ChatMessage[]): Array<Extract<RunEvent, { type: 'context.projected' | 'llm.requested' }>> {
    const enc = messages.map((m) => JSON.stringify(m));
    const prefixOk = this.logged.length <= enc.length && this.logged.every((s, i) => s === enc[i]);
    const out: Array<Extract<RunEvent, { type: 'context.projected' | 'llm.requested' }>> = [];
    if (!prefixOk || this.logged.length === 0) {
      out.push({ type: 'context.projected', turn, messages });
      out.push({ type: 'llm.requested', turn, round, appended: [] });
    } else {
      out.push({ type: 'llm.requested', turn, round, appended: messages.slice(this.logged.length) });
    }
    this.logged = enc;
    return out;
  }
}
