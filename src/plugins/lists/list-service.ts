/**
 * The box's own shopping list and to-do list (issue 15 "a local shopping list
 * and to-do list kept in the box's database"), in SQLite
 * (`<dataDir>/lists.db`, WAL, synchronous=FULL; a versioned store,
 * src/kernel/store-version.ts LISTS_STORE). An item is open until it is
 * completed (ticked off: kept, with the time, for a history a WebUI can show)
 * or removed (deleted). Items are found by id or by their text, compared
 * case-insensitively with spaces and a plural "s" ignored ("Eggs" is "egg");
 * adding an open item again does not duplicate it. This service is the API
 * the local intents, the LLM tools (lists-plugin.ts) and a WebUI share.
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { HomeAgentError } from '../../kernel/errors.js';
import { openSqliteStore, type SqliteStoreSpec } from '../../kernel/store-version.js';
import type { Clock } from '../../kernel/clock.js';

/** The lists the box keeps: `shopping` (HassShoppingList*) and `todo` (HassList* with the to-do list). */
export const LIST_NAMES = ['shopping', 'todo'] as const;
/** One of LIST_NAMES. */
export type ListName = (typeof LIST_NAMES)[number];

/** One item of a list. Times are ms since the epoch. */
export interface ListItem {
  id: string;
  list: ListName;
  /** What was said or typed, trimmed ("oat milk", "call the plumber"). */
  text: string;
  /** True once completed (ticked off). */
  done: boolean;
  created_at: number;
  completed_at?: number;
}

/** What a list change was (event plugin.lists.changed). */
export type ListChange = 'added' | 'removed' | 'completed';

/** Bad list arguments: an unknown list, empty or overlong text (code LIST_INVALID). */
export class ListError extends HomeAgentError {
  constructor(message: string) {
    super('LIST_INVALID', message);
  }
}

/** Options of ListService. */
export interface ListServiceOptions {
  /** SQLite file; ':memory:' for a throwaway store. */
  dbPath: string;
  /** The data directory (pre-migration copies go under its backups/); default: the file's directory. */
  dataDir?: string;
  clock: Clock;
  /** Called after an item was added, removed or completed; errors are the caller's to log (they are caught). */
  onChange?: (change: ListChange, item: ListItem) => void;
}

/** Longest item text, in characters. */
export const MAX_ITEM_CHARS = 200;

/** Which item: by id, or by text (see module comment). */
export interface ItemRef {
  id?: string;
  text?: string;
}

const LISTS_SCHEMA = `CREATE TABLE IF NOT EXISTS list_items (
  id TEXT PRIMARY KEY, list TEXT NOT NULL, text TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, completed_at INTEGER);
CREATE INDEX IF NOT EXISTS list_items_by_list ON list_items (list, done, created_at)`;

/**
 * The lists store's versions (`PRAGMA user_version`):
 * - 1: table `list_items` (id, list, text, done, created_at, completed_at).
 */
export const LISTS_STORE: SqliteStoreSpec = {
  store: 'lists',
  version: 1,
  create: (db) => db.exec(LISTS_SCHEMA),
  migrations: [{ to: 1, description: 'list_items', up: (db) => db.exec(LISTS_SCHEMA) }],
};

interface Row {
  id: string;
  list: string;
  text: string;
  done: number;
  created_at: number;
  completed_at: number | null;
}

function fromRow(r: Row): ListItem {
  return {
    id: r.id,
    list: r.list as ListName,
    text: r.text,
    done: r.done === 1,
    created_at: r.created_at,
    ...(r.completed_at !== null ? { completed_at: r.completed_at } : {}),
  };
}

/**
 * The form items are compared in (never shown): lower case, single spaces, no trailing punctuation, a plural
 * "s" and then a final "e" dropped from each word, so "Apples" is "apple" and "tomatoes" "tomato".
 */
export function itemKey(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[.!?,;:。！？，、]+$/u, '')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => (w.length > 3 && /[^s]s$/.test(w) ? w.slice(0, -1) : w))
    .map((w) => (w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w)) // "tomatoes"/"tomato", "apples"/"apple"
    .join(' ');
}

/** True when `v` names one of the box's lists. */
export function isListName(v: unknown): v is ListName {
  return typeof v === 'string' && (LIST_NAMES as readonly string[]).includes(v);
}

/** See module comment. */
export class ListService {
  private db: Database.Database | undefined;

  constructor(private readonly opts: ListServiceOptions) {}

  /** Open the store (creating or migrating it: LISTS_STORE). Throws StoreTooNewError / StoreMigrationError. */
  start(): void {
    if (this.db) return;
    this.db = openSqliteStore(this.opts.dbPath, LISTS_STORE, this.opts.dataDir ? { dataDir: this.opts.dataDir } : {});
  }

  /** Close the store. */
  stop(): void {
    this.db?.close();
    this.db = undefined;
  }

  private requireDb(): Database.Database {
    if (!this.db) throw new HomeAgentError('LISTS_NOT_STARTED', 'the list service is not started');
    return this.db;
  }

  private checkList(list: unknown): ListName {
    if (!isListName(list)) throw new ListError(`unknown list ${JSON.stringify(list)}: the lists are ${LIST_NAMES.join(' and ')}`);
    return list;
  }

  private changed(change: ListChange, item: ListItem): void {
    try {
      this.opts.onChange?.(change, item);
    } catch {
      /* a listener's failure does not undo the change */
    }
  }

  /**
   * The items of `list`, oldest first: open ones, or with `done: true` the
   * completed ones as well. Throws ListError for an unknown list.
   */
  items(list: ListName, opts: { done?: boolean } = {}): ListItem[] {
    const db = this.requireDb();
    this.checkList(list);
    const rows = db.prepare(`SELECT * FROM list_items WHERE list = ? ${opts.done ? '' : 'AND done = 0'} ORDER BY created_at, rowid`).all(list) as Row[];
    return rows.map(fromRow);
  }

  /**
   * Add `text` to `list`; an open item with the same text (itemKey) is not
   * added twice: `added` is false and `item` the one already there. Throws
   * ListError for an unknown list or text that is empty or longer than
   * MAX_ITEM_CHARS.
   */
  add(list: ListName, text: string): { item: ListItem; added: boolean } {
    const db = this.requireDb();
    this.checkList(list);
    const t = typeof text === 'string' ? text.trim().replace(/\s+/g, ' ') : '';
    if (!t) throw new ListError('an item needs some text');
    if (t.length > MAX_ITEM_CHARS) throw new ListError(`an item is at most ${MAX_ITEM_CHARS} characters (got ${t.length})`);
    const same = this.find(list, { text: t });
    if (same) return { item: same, added: false };
    const item: ListItem = { id: randomUUID(), list, text: t, done: false, created_at: this.opts.clock.now() };
    db.prepare(`INSERT INTO list_items (id, list, text, done, created_at) VALUES (?, ?, ?, 0, ?)`).run(item.id, list, item.text, item.created_at);
    this.changed('added', item);
    return { item, added: true };
  }

  /** The open item of `list` that `ref` names (by id, else by text), or undefined. */
  find(list: ListName, ref: ItemRef): ListItem | undefined {
    this.checkList(list);
    const open = this.items(list);
    if (ref.id !== undefined) return open.find((i) => i.id === ref.id);
    if (ref.text === undefined) return undefined;
    const key = itemKey(ref.text);
    return open.find((i) => itemKey(i.text) === key);
  }

  /** Delete the open item `ref` names; returns it, or undefined when `list` has no such open item. */
  remove(list: ListName, ref: ItemRef): ListItem | undefined {
    const db = this.requireDb();
    const item = this.find(list, ref);
    if (!item) return undefined;
    db.prepare(`DELETE FROM list_items WHERE id = ?`).run(item.id);
    this.changed('removed', item);
    return item;
  }

  /** Tick off the open item `ref` names (kept as done); returns it, or undefined when `list` has no such open item. */
  complete(list: ListName, ref: ItemRef): ListItem | undefined {
    const db = this.requireDb();
    const item = this.find(list, ref);
    if (!item) return undefined;
    const at = this.opts.clock.now();
    db.prepare(`UPDATE list_items SET done = 1, completed_at = ? WHERE id = ?`).run(at, item.id);
    const done = { ...item, done: true, completed_at: at };
    this.changed('completed', done);
    return done;
  }
}
