/**
 * Timers (seed 000 "timer" plugin: timer_set + interrupt feedback): start,
 * cancel, pause, resume, lengthen/shorten and list countdowns (the operations
 * of Home Assistant's timer intents: HassStartTimer, HassCancelTimer,
 * HassCancelAllTimers, HassPauseTimer, HassUnpauseTimer, HassIncreaseTimer,
 * HassDecreaseTimer, HassTimerStatus), kept in SQLite (`<dataDir>/timers.db`,
 * WAL, synchronous=FULL) so they survive a restart; a timer that fell due
 * while the box was off fires right after start, a paused one stays paused.
 * Time comes from an injectable Clock. Expiry calls `onExpire` once per timer.
 * An operation on "the timer" never picks one of several: with no selector
 * and more than one candidate it throws TimerAmbiguousError (the caller asks
 * which).
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { HomeAgentError } from '../../kernel/errors.js';
import { openSqliteStore, type SqliteStoreSpec } from '../../kernel/store-version.js';
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
  /** `paused`: not counting down; `ends_at` is meaningless then and `paused_remaining_ms` holds what is left. */
  state: 'running' | 'paused' | 'fired' | 'cancelled';
  /** ms left when the timer was paused (state `paused` only). */
  paused_remaining_ms?: number;
}

/** An active (running or paused) timer with the seconds left (rounded up). */
export interface TimerStatus extends Timer {
  remaining_s: number;
}

/** Which timer an operation means: by id, by name (case-insensitive), or by the length it was set for. Empty: "the timer". */
export interface TimerSelector {
  id?: string;
  name?: string;
  /** The length the timer was started with, in seconds ("the 10 minute timer"). */
  seconds?: number;
}

/** What a timer change was (event plugin.timers.changed). */
export type TimerChange = 'started' | 'cancelled' | 'paused' | 'resumed' | 'increased' | 'decreased';

/** Bad timer arguments (code TIMER_INVALID). */
export class TimerError extends HomeAgentError {
  constructor(message: string) {
    super('TIMER_INVALID', message);
  }
}

/**
 * "The timer" fits more than one active timer (code TIMER_AMBIGUOUS): nothing
 * was changed; `candidates` are the timers it could mean, soonest first.
 */
export class TimerAmbiguousError extends HomeAgentError {
  constructor(readonly candidates: TimerStatus[]) {
    super('TIMER_AMBIGUOUS', `${candidates.length} timers fit (${candidates.map((t) => t.name ?? `${t.duration_s} s`).join(', ')}): say which one (id or name)`);
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
  /** Called after a timer was started, cancelled, paused, resumed or changed in length (by a tool or a local intent); errors are logged, not thrown. */
  onChange?: (change: TimerChange, timer: Timer) => void;
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
  remaining_ms: number | null;
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
    state: r.state === 'fired' || r.state === 'cancelled' || r.state === 'paused' ? r.state : 'running',
    ...(r.state === 'paused' ? { paused_remaining_ms: Math.max(0, r.remaining_ms ?? 0) } : {}),
  };
}

const TIMERS_SCHEMA_V1 = `CREATE TABLE IF NOT EXISTS timers (
  id TEXT PRIMARY KEY, name TEXT, duration_s REAL NOT NULL, started_at INTEGER NOT NULL,
  ends_at INTEGER NOT NULL, channel TEXT NOT NULL, lang TEXT NOT NULL DEFAULT 'en', state TEXT NOT NULL)`;

const TIMERS_SCHEMA = `CREATE TABLE IF NOT EXISTS timers (
  id TEXT PRIMARY KEY, name TEXT, duration_s REAL NOT NULL, started_at INTEGER NOT NULL,
  ends_at INTEGER NOT NULL, channel TEXT NOT NULL, lang TEXT NOT NULL DEFAULT 'en', state TEXT NOT NULL,
  remaining_ms INTEGER)`;

/**
 * The timers store's versions (`PRAGMA user_version`, src/kernel/store-version.ts):
 * - 0: the unversioned `timers` table of commit e216bba;
 * - 1: the same table, versioned;
 * - 2: `remaining_ms` (ms left of a paused timer) and the state `paused`.
 */
export const TIMERS_STORE: SqliteStoreSpec = {
  store: 'timers',
  version: 2,
  create: (db) => db.exec(TIMERS_SCHEMA),
  migrations: [
    { to: 1, description: 'adopt schema versions (timers as in e216bba)', up: (db) => db.exec(TIMERS_SCHEMA_V1) },
    {
      to: 2,
      description: 'paused timers: column remaining_ms',
      up: (db) => {
        const cols = db.prepare(`PRAGMA table_info(timers)`).all() as Array<{ name: string }>;
        if (!cols.some((c) => c.name === 'remaining_ms')) db.exec(`ALTER TABLE timers ADD COLUMN remaining_ms INTEGER`);
      },
    },
  ],
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
    const db = openSqliteStore(this.opts.dbPath, TIMERS_STORE, this.opts.dataDir ? { dataDir: this.opts.dataDir } : {});
    this.db = db;
    const rows = db.prepare(`SELECT * FROM timers WHERE state = 'running' ORDER BY ends_at`).all() as Row[];
    for (const r of rows) this.arm(fromRow(r));
    // Paused timers stay paused: nothing to arm.
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
    // A timer lengthened since this handle was armed is not due yet: arm it for its new end.
    if (row.ends_at > this.opts.clock.now()) {
      this.arm(fromRow(row));
      return;
    }
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

  private changed(change: TimerChange, t: Timer): void {
    try {
      this.opts.onChange?.(change, t);
    } catch (err) {
      this.opts.log.error({ err, id: t.id }, 'timer change handler failed');
    }
  }

  /** Active timers (running and paused), soonest end first (a paused one by what it has left), with seconds left. */
  status(): TimerStatus[] {
    const db = this.requireDb();
    const now = this.opts.clock.now();
    const rows = db.prepare(`SELECT * FROM timers WHERE state IN ('running', 'paused')`).all() as Row[];
    return rows
      .map((r) => {
        const t = fromRow(r);
        const left = t.state === 'paused' ? (t.paused_remaining_ms ?? 0) : r.ends_at - now;
        return { ...t, remaining_s: Math.max(0, Math.ceil(left / 1000)) };
      })
      .sort((a, b) => a.remaining_s - b.remaining_s || a.started_at - b.started_at);
  }

  /**
   * The active timers `sel` fits, limited to `states` (default: running and
   * paused): by id, by name (case-insensitive, a trailing " timer" ignored),
   * by the length it was set for, or every one of them when `sel` is empty.
   */
  find(sel: TimerSelector = {}, states: ReadonlyArray<'running' | 'paused'> = ['running', 'paused']): TimerStatus[] {
    const norm = (n: string | undefined): string => (n ?? '').trim().toLowerCase().replace(/\s+timer$/, '');
    return this.status().filter(
      (t) =>
        states.includes(t.state as 'running' | 'paused') &&
        (sel.id === undefined || t.id === sel.id) &&
        (sel.name === undefined || norm(t.name) === norm(sel.name)) &&
        (sel.seconds === undefined || Math.round(t.duration_s) === Math.round(sel.seconds)),
    );
  }

  /**
   * The one timer `sel` means among those in `states`: undefined when none
   * fits; throws TimerAmbiguousError when several do (an empty selector with
   * two timers running is never read as "the first one").
   */
  pick(sel: TimerSelector, states?: ReadonlyArray<'running' | 'paused'>): TimerStatus | undefined {
    const found = this.find(sel, states);
    if (found.length > 1) throw new TimerAmbiguousError(found);
    return found[0];
  }

  /**
   * Cancel by id, by name (case-insensitive), by the length it was set for, or
   * all (`all: true`); with no selector, the one active timer. Returns the
   * cancelled timers (empty when nothing matched). Throws TimerAmbiguousError
   * when the selector fits several timers (and `all` is not set).
   */
  cancel(sel: TimerSelector & { all?: boolean } = {}): Timer[] {
    const db = this.requireDb();
    let chosen: TimerStatus[];
    if (sel.all) chosen = this.find({});
    else {
      const one = this.pick(sel);
      chosen = one ? [one] : [];
    }
    const upd = db.prepare(`UPDATE timers SET state = 'cancelled' WHERE id = ?`);
    for (const t of chosen) {
      upd.run(t.id);
      this.disarm(t.id);
    }
    const cancelled = chosen.map((t) => ({ ...t, state: 'cancelled' as const }));
    for (const t of cancelled) this.changed('cancelled', t);
    return cancelled;
  }

  private disarm(id: string): void {
    const h = this.handles.get(id);
    if (h) this.opts.clock.clearTimeout(h);
    this.handles.delete(id);
  }

  /**
   * Pause the running timer `sel` means: it stops counting down and keeps
   * what it has left (also across a restart). Returns it, or undefined when
   * no running timer fits; throws TimerAmbiguousError when several do.
   */
  pause(sel: TimerSelector = {}): TimerStatus | undefined {
    const db = this.requireDb();
    const t = this.pick(sel, ['running']);
    if (!t) return undefined;
    const left = Math.max(0, t.ends_at - this.opts.clock.now());
    db.prepare(`UPDATE timers SET state = 'paused', remaining_ms = ? WHERE id = ?`).run(left, t.id);
    this.disarm(t.id);
    const paused = { ...t, state: 'paused' as const, paused_remaining_ms: left };
    this.changed('paused', paused);
    return paused;
  }

  /**
   * Resume the paused timer `sel` means: it counts down again from what it
   * had left. Returns it, or undefined when no paused timer fits; throws
   * TimerAmbiguousError when several do.
   */
  resume(sel: TimerSelector = {}): TimerStatus | undefined {
    const db = this.requireDb();
    const t = this.pick(sel, ['paused']);
    if (!t) return undefined;
    const left = t.paused_remaining_ms ?? 0;
    const ends = this.opts.clock.now() + left;
    db.prepare(`UPDATE timers SET state = 'running', remaining_ms = NULL, ends_at = ? WHERE id = ?`).run(ends, t.id);
    const { paused_remaining_ms: _gone, ...rest } = t;
    const resumed: TimerStatus = { ...rest, state: 'running', ends_at: ends, remaining_s: Math.ceil(left / 1000) };
    this.arm(resumed);
    this.changed('resumed', resumed);
    return resumed;
  }

  /**
   * Add (`seconds` > 0) or take off (`seconds` < 0) time from the active timer
   * `sel` means (HassIncreaseTimer / HassDecreaseTimer). Returns it with its
   * new time left, or undefined when none fits; throws TimerAmbiguousError
   * when several do, TimerError when the change is 0 or would leave it with
   * less than 1 second or more than 7 days (nothing is changed then).
   */
  adjust(sel: TimerSelector, seconds: number): TimerStatus | undefined {
    const db = this.requireDb();
    if (!Number.isFinite(seconds) || seconds === 0) throw new TimerError(`a timer change must be a number of seconds other than 0 (got ${seconds})`);
    const t = this.pick(sel);
    if (!t) return undefined;
    const now = this.opts.clock.now();
    const leftMs = t.state === 'paused' ? (t.paused_remaining_ms ?? 0) : t.ends_at - now;
    const newLeft = leftMs + Math.round(seconds * 1000);
    if (newLeft < 1000) throw new TimerError(`the timer has only ${formatDuration(Math.ceil(leftMs / 1000), 'en')} left; taking off ${formatDuration(-seconds, 'en')} would end it`);
    if (newLeft > MAX_TIMER_S * 1000) throw new TimerError('a timer can run for 7 days at most');
    let next: TimerStatus;
    if (t.state === 'paused') {
      db.prepare(`UPDATE timers SET remaining_ms = ? WHERE id = ?`).run(newLeft, t.id);
      next = { ...t, paused_remaining_ms: newLeft, remaining_s: Math.ceil(newLeft / 1000) };
    } else {
      const ends = now + newLeft;
      db.prepare(`UPDATE timers SET ends_at = ? WHERE id = ?`).run(ends, t.id);
      this.disarm(t.id);
      next = { ...t, ends_at: ends, remaining_s: Math.ceil(newLeft / 1000) };
      this.arm(next);
    }
    this.changed(seconds > 0 ? 'increased' : 'decreased', next);
    return next;
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
