/**
 * The memory database: one SQLite file (dataDir/memory.db) holding the context
 * window, documents, graph and loop bookkeeping (issue 5, instead of the
 * seeds' JSON files).
 *
 * Deleted content is zeroed (`secure_delete`), so what is forgotten leaves no
 * bytes behind once the WAL is checkpointed (src/memory/forget.ts).
 *
 * Durability: WAL + synchronous=FULL, so a write is on disk when the
 * statement returns; read-modify-write runs in IMMEDIATE transactions (the
 * write lock is taken up front, so no SQLITE_BUSY upgrade failure can reach a
 * user); busy_timeout covers other connections (the CLI, a second process).
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqliteStore, type OpenStoreOptions, type SqliteStoreSpec } from '../kernel/store-version.js';

/** A better-sqlite3 connection. */
export type Db = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS context_events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE, time INTEGER NOT NULL, kind TEXT NOT NULL, source TEXT NOT NULL,
  input TEXT NOT NULL, response TEXT NOT NULL, tool TEXT, interrupted INTEGER NOT NULL DEFAULT 0,
  speaker TEXT, vec TEXT NOT NULL, fp TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rule_queue(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, time INTEGER NOT NULL,
  speaker TEXT, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY, event_id TEXT, time INTEGER NOT NULL, kind TEXT NOT NULL, source TEXT NOT NULL,
  speaker TEXT, title TEXT NOT NULL DEFAULT '', input TEXT NOT NULL, response TEXT NOT NULL, tool TEXT,
  access_count INTEGER NOT NULL DEFAULT 0, last_access INTEGER NOT NULL, distilled INTEGER NOT NULL DEFAULT 0,
  vec TEXT NOT NULL, fp TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS docs_cold ON docs(distilled, last_access);
CREATE INDEX IF NOT EXISTS docs_fp ON docs(fp);
CREATE INDEX IF NOT EXISTS docs_time ON docs(time);
CREATE TABLE IF NOT EXISTS doc_terms(term TEXT NOT NULL, w REAL NOT NULL, doc_id INTEGER NOT NULL,
  PRIMARY KEY(term, w DESC, doc_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS doc_terms_doc ON doc_terms(doc_id);
CREATE TABLE IF NOT EXISTS term_df(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kw_terms(term TEXT NOT NULL, s REAL NOT NULL, doc_id INTEGER NOT NULL,
  PRIMARY KEY(term, s DESC, doc_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kw_terms_doc ON kw_terms(doc_id);
CREATE TABLE IF NOT EXISTS entities(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, type TEXT NOT NULL DEFAULT 'thing',
  mention_count INTEGER NOT NULL DEFAULT 1, nterms INTEGER NOT NULL DEFAULT 1,
  created INTEGER NOT NULL, updated INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entities_updated ON entities(updated);
CREATE TABLE IF NOT EXISTS entity_terms(term TEXT NOT NULL, entity_id INTEGER NOT NULL,
  PRIMARY KEY(term, entity_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_terms_entity ON entity_terms(entity_id);
CREATE TABLE IF NOT EXISTS aliases(alias TEXT PRIMARY KEY, entity_id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relations(
  id INTEGER PRIMARY KEY, source INTEGER NOT NULL, target INTEGER NOT NULL, relation_type TEXT NOT NULL,
  confidence REAL NOT NULL DEFAULT 0.8, sentence TEXT NOT NULL DEFAULT '', doc_id INTEGER,
  created INTEGER NOT NULL, updated INTEGER NOT NULL, UNIQUE(source, relation_type, target));
CREATE INDEX IF NOT EXISTS relations_target ON relations(target);
CREATE INDEX IF NOT EXISTS relations_updated ON relations(updated);
CREATE TABLE IF NOT EXISTS consolidation_seen(key TEXT PRIMARY KEY, time INTEGER NOT NULL) WITHOUT ROWID;
`;

/**
 * Version 2 (issue 18 "People"): the household's people (everyone who was
 * identified speaking, or added as a person), and on each relation whether
 * it is sensitive (health, money, passwords, where the key is hidden) and
 * whose it is (`owner`: the person it is about; another speaker is not told).
 * Speakers stored as a channel's name by older releases (`console`, `cli`:
 * the console and the CLI injected them as the user) become unknown.
 */
const SCHEMA_V2 = `
CREATE TABLE IF NOT EXISTS people(name TEXT PRIMARY KEY COLLATE NOCASE, created INTEGER NOT NULL, last_seen INTEGER NOT NULL);
ALTER TABLE relations ADD COLUMN sensitive INTEGER NOT NULL DEFAULT 0;
ALTER TABLE relations ADD COLUMN owner TEXT;
UPDATE context_events SET speaker = NULL WHERE speaker IN ('console', 'cli');
UPDATE docs SET speaker = NULL WHERE speaker IN ('console', 'cli');
UPDATE rule_queue SET speaker = NULL WHERE speaker IN ('console', 'cli');
`;

/**
 * Version 3 (issue 18 "Forgetting for real", "Versions", "Sensitive facts"):
 * - `relation_versions`: the earlier values of a fact (memory_edit, a trait
 *   set again): normal recall reads `relations` only; "what did I tell you
 *   before?" reads these. Forgetting a fact removes them too.
 * - `fact_candidates`: sensitive facts the box would have stored on its own
 *   (rule distiller, cold-document distillation) wait here until their person
 *   says yes (memory_candidates / memory_confirm).
 * - `forgotten`: one row per act of forgetting, with when and how many items:
 *   a tombstone holding none of the text.
 */
const SCHEMA_V3 = `
CREATE TABLE IF NOT EXISTS relation_versions(
  id INTEGER PRIMARY KEY, relation_id INTEGER, source INTEGER NOT NULL, relation_type TEXT NOT NULL, target_name TEXT NOT NULL,
  confidence REAL NOT NULL, sentence TEXT NOT NULL DEFAULT '', sensitive INTEGER NOT NULL DEFAULT 0, owner TEXT,
  valid_from INTEGER NOT NULL, replaced INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS relation_versions_rel ON relation_versions(relation_id);
CREATE INDEX IF NOT EXISTS relation_versions_source ON relation_versions(source, relation_type);
CREATE TABLE IF NOT EXISTS fact_candidates(
  id INTEGER PRIMARY KEY, time INTEGER NOT NULL, origin TEXT NOT NULL, subject TEXT NOT NULL, subject_type TEXT,
  relation TEXT NOT NULL, object TEXT NOT NULL, object_type TEXT, confidence REAL NOT NULL, sentence TEXT NOT NULL DEFAULT '',
  owner TEXT, UNIQUE(subject, relation, object));
CREATE TABLE IF NOT EXISTS forgotten(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, items INTEGER NOT NULL);
`;

/**
 * Version 4 (issue 18 "Pictures"; src/memory/pictures.ts):
 * - `pictures`: one row per stored image file, by the sha256 of its bytes
 *   (hex; the file is `<data dir>/images/<first two hex>/<sha256>.<ext>`),
 *   its size in bytes and pixels, and when it was first stored (ms).
 * - `picture_entries`: the memory of a picture: when it was taken or shown
 *   (`time`, ms), where it came from (`source`: a camera's name, or
 *   `turn:<plugin>` for an image given with an input), the turn that showed
 *   it to the model (`turn`, input id; NULL for a snapshot no conversation
 *   looked at) and what it shows (`description`, `described_by`: `model`,
 *   `camera` (the camera's caption) or `default`). A picture with an entry
 *   that has a turn is referenced by the conversation's memory and is kept
 *   until that is forgotten; the others go oldest first under the size budget.
 */
const SCHEMA_V4 = `
CREATE TABLE IF NOT EXISTS pictures(
  sha256 TEXT PRIMARY KEY, ext TEXT NOT NULL, bytes INTEGER NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
  stored INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS picture_entries(
  id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, time INTEGER NOT NULL, source TEXT NOT NULL, turn TEXT,
  description TEXT NOT NULL, described_by TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS picture_entries_time ON picture_entries(time);
CREATE INDEX IF NOT EXISTS picture_entries_sha ON picture_entries(sha256);
CREATE INDEX IF NOT EXISTS picture_entries_turn ON picture_entries(turn);
`;

/**
 * The memory store's versions (`PRAGMA user_version`, src/kernel/store-version.ts):
 * - 0: the unversioned file of commit e216bba (the schema above, created with IF NOT EXISTS);
 * - 1: the same tables, versioned;
 * - 2: `people`, `relations.sensitive` and `relations.owner`; channel names as speakers cleared (SCHEMA_V2);
 * - 3: `relation_versions`, `fact_candidates` and `forgotten` (SCHEMA_V3);
 * - 4: `pictures` and `picture_entries` (SCHEMA_V4).
 */
export const MEMORY_STORE: SqliteStoreSpec = {
  store: 'memory',
  version: 4,
  create: (db) => {
    db.exec(SCHEMA);
    db.exec(SCHEMA_V2);
    db.exec(SCHEMA_V3);
    db.exec(SCHEMA_V4);
  },
  migrations: [
    { to: 1, description: 'adopt schema versions (tables as in e216bba; any missing one is created)', up: (db) => db.exec(SCHEMA) },
    { to: 2, description: 'the household\'s people; sensitive and owner of relations; channel names are not speakers', up: (db) => db.exec(SCHEMA_V2) },
    { to: 3, description: 'earlier versions of facts; sensitive fact candidates; tombstones of forgetting', up: (db) => db.exec(SCHEMA_V3) },
    { to: 4, description: 'pictures stored by sha256 and their entries (time, source, description)', up: (db) => db.exec(SCHEMA_V4) },
  ],
};

/**
 * Open (creating when absent) dataDir/memory.db with the memory schema,
 * migrating an older store first (a copy is kept under
 * dataDir/backups/pre-migration). Errors: StoreTooNewError (written by a newer
 * release), StoreMigrationError, or the better-sqlite3 error when the file
 * cannot be opened or is corrupt.
 */
export function openMemoryDb(dataDir: string, file = 'memory.db', opts: OpenStoreOptions = {}): Db {
  // secure_delete: forgetting for real (issue 18), deleted rows are overwritten with zeros, not left in free space.
  return openSqliteStore(path.join(dataDir, file), MEMORY_STORE, { ...opts, dataDir, pragmas: ['busy_timeout = 5000', 'foreign_keys = OFF', 'secure_delete = ON'] });
}

/** Read a meta value (`undefined` when unset). */
export function getMeta(db: Db, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

/** Write a meta value. */
export function setMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

/** Run `fn` in an IMMEDIATE transaction (write lock taken at BEGIN). */
export function immediate<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
