/**
 * Timers (seed 000 "timer" plugin: timer_set + interrupt feedback): start,
 * cancel and list countdowns, kept in SQLite (`<dataDir>/timers.db`, WAL,
 * synchronous=FULL) so they survive a restart; a timer that fell due while
 * the box was off fires right after start. Time comes from an injectable
 * Clock. Expiry calls `onExpire` once per timer.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { HomeAgentError } from '../../kernel/errors.js';
import { migrateSqlite, type SqliteStoreSpec } from '../../kernel/store-version.js';
import type { Logger } from '../../kernel/log-types.js';
import type { Clock, TimerHandle } from '../../kernel/clock.js';

/** One timer. Times are ms since epoch; `duration_s` in seconds. */
export interface Timer {
  id: string;
  /** Optional name ("pasta"). */
  name?: string;
  duration_s: number;
  started_at: number;
  ends_at: number;
  /** Output channel the expiry is announced on. */
  channel: string;
  /** 'en' | 'zh': language of the request, used for the spoken expiry. */
  lang: string;
  state: 'running' | 'fired' | 'cancelled';
}

/** A running timer with the seconds left (rounded up). */
export interface TimerStatus extends Timer {
  remaining_s: number;
}

/** Bad timer arguments (code TIMER_INVALID). */
export class TimerError extends HomeAgentError {
  constructor(message: string) {
    super('TIMER_INVALID', message);
  }
}

/** Options of TimerService. */
export interface TimerServiceOptions {
  /** SQLite file; ':memory:' for a throwaway store. */
  dbPath: string;
  /** The data directory (pre-migration copies go under its backups/); default: the file's directory. */
  dataDir?: string;
  clock: Clock;
  log: Logger;
  onExpire: (timer: Timer) => void;
  /** Called after a timer was started or cancelled (by a tool or a local intent); errors are logged, not thrown. */
  onChange?: (change: 'started' | 'cancelled', timer: Timer) => void;
}

interface Row {
  id: string;
  name: string | null;
  duration_s: number;
  started_at: number;
  ends_at: number;
  channel: string;
  lang: string;
  state: string;
}

function fromRow(r: Row): Timer {
  return {
    id: r.id,
    ...(r.name ? { name: r.name } : {}),
    duration_s: r.duration_s,
    started_at: r.started_at,
    ends_at: r.ends_at,
    channel: r.channel,
    lang: r.lang,
    state: r.state === 'fired' ? 'fired' : r.state === 'cancelled' ? 'cancelled' : 'running',
  };
}

const TIMERS_SCHEMA = `CREATE TABLE IF NOT EXISTS timers (
  id TEXT PRIMARY KEY, name TEXT, duration_s REAL NOT NULL, started_at INTEGER NOT NULL,
  ends_at INTEGER NOT NULL, channel TEXT NOT NULL, lang TEXT NOT NULL DEFAULT 'en', state TEXT NOT NULL)`;

/**
 * The timers store's versions (`PRAGMA user_version`, src/kernel/store-version.ts):
 * - 0: the unversioned `timers` table of commit e216bba;
 * - 1: the same table, versioned.
 */
export const TIMERS_STORE: SqliteStoreSpec = {
  store: 'timers',
  version: 1,
  create: (db) => db.exec(TIMERS_SCHEMA),
  migrations: [{ to: 1, description: 'adopt schema versions (timers as in e216bba)', up: (db) => db.exec(TIMERS_SCHEMA) }],
};

/** Longest timer: 7 days. */
export const MAX_TIMER_S = 7 * 24 * 3600;

/** See module comment. */
export class TimerService {
  private db: Database.Database | undefined;
  private readonly handles = new Map<string, TimerHandle>();

  constructor(private readonly opts: TimerServiceOptions) {}

  /**
   * Open the store (migrating an older one first: TIMERS_STORE) and arm every
   * running timer (overdue ones fire now). Throws StoreTooNewError /
   * StoreMigrationError (src/kernel/store-version.ts).
   */
  start(): void {
    if (this.db) return;
    if (this.opts.dbPath !== ':memory:') mkdirSync(path.dirname(this.opts.dbPath), { recursive: true });
    const db = new Database(this.opts.dbPath);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrateSqlite(db, TIMERS_STORE, { file: this.opts.dbPath, ...(this.opts.dataDir ? { dataDir: this.opts.dataDir } : {}) });
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    const rows = db.prepare(`SELECT * FROM timers WHERE state = 'running' ORDER BY ends_at`).all() as Row[];
    for (const r of rows) this.arm(fromRow(r));
  }

  /** Disarm timers and close the store (timers stay running in the store). */
  stop(): void {
    for (const h of this.handles.values()) this.opts.clock.clearTimeout(h);
    this.handles.clear();
    this.db?.close();
    this.db = undefined;
  }

  private requireDb(): Database.Database {
    if (!this.db) throw new HomeAgentError('TIMERS_NOT_STARTED', 'the timer service is not started');
    return this.db;
  }

  private arm(t: Timer): void {
    const delay = Math.max(0, t.ends_at - this.opts.clock.now());
    const h = this.opts.clock.setTimeout(() => this.fire(t.id), delay);
    this.handles.set(t.id, h);
  }

  private fire(id: string): void {
    this.handles.delete(id);
    const db = this.db;
    if (!db) return;
    const row = db.prepare(`SELECT * FROM timers WHERE id = ?`).get(id) as Row | undefined;
    if (!row || row.state !== 'running') return;
    db.prepare(`UPDATE timers SET state = 'fired' WHERE id = ?`).run(id);
    const t = { ...fromRow(row), state: 'fired' as const };
    this.opts.log.info({ id, duration_s: t.duration_s }, 'timer expired');
    try {
      this.opts.onExpire(t);
    } catch (err) {
      this.opts.log.error({ err, id }, 'timer expiry handler failed');
    }
  }

  /** Start a timer of `seconds` (1 s .. 7 days). Throws TimerError on bad values. */
  set(args: { seconds: number; name?: string; channel: string; lang?: string }): Timer {
    const db = this.requireDb();
    const s = args.seconds;
    if (!Number.isFinite(s) || s < 1 || s > MAX_TIMER_S) throw new TimerError(`a timer must last between 1 second and 7 days (got ${s})`);
    const now = this.opts.clock.now();
    const t: Timer = {
      id: randomUUID(),
      ...(args.name?.trim() ? { name: args.name.trim() } : {}),
      duration_s: s,
      started_at: now,
      ends_at: now + Math.round(s * 1000),
      channel: args.channel,
      lang: args.lang ?? 'en',
      state: 'running',
    };
    db.prepare(`INSERT INTO timers (id, name, duration_s, started_at, ends_at, channel, lang, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')`).run(
      t.id, t.name ?? null, t.duration_s, t.started_at, t.ends_at, t.channel, t.lang,
    );
    this.arm(t);
    this.changed('started', t);
    return t;
  }

  private changed(change: 'started' | 'cancelled', t: Timer): void {
    try {
      this.opts.onChange?.(change, t);
    } catch (err) {
      this.opts.log.error({ err, id: t.id }, 'timer change handler failed');
    }
  }

  /** Running timers, soonest first, with seconds left. */
  status(): TimerStatus[] {
    const db = this.requireDb();
    const now = this.opts.clock.now();
    const rows = db.prepare(`SELECT * FROM timers WHERE state = 'running' ORDER BY ends_at`).all() as Row[];
    return rows.map((r) => ({ ...fromRow(r), remaining_s: Math.max(0, Math.ceil((r.ends_at - now) / 1000)) }));
  }

  /**
   * Cancel by id, by name (case-insensitive), or all; with no selector and
   * exactly one running timer, that one. Returns the cancelled timers (empty
   * when nothing matched).
   */
  cancel(sel: { id?: string; name?: string; all?: boolean } = {}): Timer[] {
    const db = this.requireDb();
    const running = this.status();
    let chosen: TimerStatus[];
    if (sel.all) chosen = running;
    else if (sel.id) chosen = running.filter((t) => t.id === sel.id);
    else if (sel.name) chosen = running.filter((t) => t.name?.toLowerCase() === sel.name?.toLowerCase());
    else chosen = running.length === 1 ? running : running.slice(0, 1);
    const upd = db.prepare(`UPDATE timers SET state = 'cancelled' WHERE id = ?`);
    for (const t of chosen) {
      upd.run(t.id);
      const h = this.handles.get(t.id);
      if (h) this.opts.clock.clearTimeout(h);
      this.handles.delete(t.id);
    }
    const cancelled = chosen.map((t) => ({ ...t, state: 'cancelled' as const }));
    for (const t of cancelled) this.changed('cancelled', t);
    return cancelled;
  }
}

/** Speak a duration: en "3 hours and 10 minutes", zh "3小时10分钟". */
export function formatDuration(seconds: number, lang: string): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (lang === 'zh') {
    const parts = [h ? `${h}小时` : '', m ? `${m}分钟` : '', sec ? `${sec}秒` : ''].filter(Boolean);
    return parts.length ? parts.join('') : '0秒';
  }
  const unit = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;
  const parts = [h ? unit(h, 'hour') : '', m ? unit(m, 'minute') : '', sec ? unit(sec, 'second') : ''].filter(Boolean);
  if (parts.length === 0) return '0 seconds';
  if (parts.length === 1) return parts[0] as string;
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The spoken expiry text of a timer, in its language. */
export function expiryText(t: Timer): string {
  if (t.lang === 'zh') return t.name ? `${t.name}计时器时间到了。` : `${formatDuration(t.duration_s, 'zh')}的计时器时间到了。`;
  return t.name ? `Your ${t.name} timer is done.` : `Your timer for ${formatDuration(t.duration_s, 'en')} is done.`;
}
