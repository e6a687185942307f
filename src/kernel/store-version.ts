/**
 * Versioned stores (issue 13 "Versioned stores with migrations"; STYLE.md
 * "every persisted format carries a version and a migration path"). One
 * module every store opens through:
 *
 * - SQLite (`memory.db`, `runlog.db`, `settings.db`, `timers.db`, `lists.db`): the version
 *   is `PRAGMA user_version` ({@link migrateSqlite}).
 * - JSON (`home/registry.json`): a top-level `schema_version` with the payload
 *   under one key, `{"schema_version": 1, "registry": {...}}`
 *   ({@link readVersionedJson}, {@link encodeVersionedJson}).
 *
 * A store without a version is version 0: the format written by the release
 * of commit e216bba (the last one before versions). Opening a store:
 * - empty / missing: created at the current version, nothing copied;
 * - older: a copy is kept first under
 *   `<dataDir>/backups/pre-migration/<store>-v<old>-<YYYYMMDDTHHMMSSmmmZ>/<path in dataDir>`
 *   (SQLite: `VACUUM INTO`, a consistent snapshot; JSON: the file's bytes),
 *   then every step `old+1 .. current` runs in one transaction (SQLite) or
 *   the migrated file replaces the old one atomically (JSON). A failing step
 *   leaves the store as it was ({@link StoreMigrationError});
 * - newer: refused with {@link StoreTooNewError} naming the store, the file's
 *   version and the version this release supports; nothing is touched.
 *
 * `image/restore-stores.mjs` (run by `homeagent rollback`) reads the copies'
 * folder names (`<store>-v<old>-<timestamp>`) and the path inside them, so
 * that layout is part of the rollback contract.
 *
 * Changing a store's format: raise the spec's `version` to N, make `create`
 * build the new schema, and add `{ to: N, description, up }` that turns a
 * version N-1 store into it (SQLite: statements on `db`, inside the
 * transaction; JSON: a function of the payload). Keep every older step: a box
 * may skip releases. test/service/stores-migration.test.ts opens the stores of
 * commit e216bba (version 0) with the current code; a new store gets a spec
 * of its own and a name in image/README.md.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { HomeAgentError } from './errors.js';
import { createLogger } from './log.js';

/** Where pre-migration copies go, relative to the data directory. */
export const PRE_MIGRATION_DIR = path.join('backups', 'pre-migration');

/** Store names: lower case letters, digits and `-` (they become folder names). */
const STORE_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * A store holds a schema version newer than this release knows (written by a
 * newer HomeAgent). Code STORE_TOO_NEW. Nothing was changed.
 */
export class StoreTooNewError extends HomeAgentError {
  constructor(
    /** The store's name (`memory`, `settings`, `runlog`, `timers`, `home-registry`). */
    readonly store: string,
    /** The file's path. */
    readonly file: string,
    /** The version found in the file. */
    readonly found: number,
    /** The newest version this release reads. */
    readonly supported: number,
  ) {
    super(
      'STORE_TOO_NEW',
      `the ${store} store ${file} has schema version ${found}, but this release supports version ${supported} at most: ` +
        `it was written by a newer HomeAgent. Start that release again, or use "sudo homeagent rollback" from it, which puts back the copies made before it migrated (backups/pre-migration in the data directory)`,
    );
  }
}

/**
 * A store could not be migrated: a step threw, a step is missing, or the
 * version in the file is not a whole number >= 0. Code STORE_MIGRATION_FAILED.
 * The store is left as it was (the transaction rolled back / the file was
 * not replaced); `backup` is the copy made before, when one was made.
 */
export class StoreMigrationError extends HomeAgentError {
  constructor(
    readonly store: string,
    readonly file: string,
    message: string,
    readonly backup?: string,
    options?: { cause?: unknown },
  ) {
    super('STORE_MIGRATION_FAILED', `the ${store} store ${file}: ${message}${backup ? ` (a copy from before is in ${backup})` : ''}`, options);
  }
}

/** Where a store lives: its file and the data directory it belongs to (copies go under it). */
export interface StoreLocation {
  /** Absolute (or cwd-relative) path of the store file; `:memory:` for a throwaway SQLite store (no copies). */
  file: string;
  /** The data directory; `file` must be inside it for copies to be kept. Default: the file's directory. */
  dataDir?: string;
}

/** Options for opening a store. */
export interface OpenStoreOptions {
  /** Wall clock in ms (copy names); default Date.now. */
  now?: () => number;
  /** Told about each migration (it is also logged, at info, in namespace `homeagent:stores`). */
  onMigrated?: (r: MigrationReport) => void;
}

/** What opening a store did. `backup` is set when a copy was kept (an older store was migrated). */
export interface MigrationReport {
  store: string;
  file: string;
  /** Version found (0 for an unversioned or new store). */
  from: number;
  /** Version after opening (the current one). */
  to: number;
  /** True when the store did not exist (or was empty) and was created at `to`. */
  created: boolean;
  /** Folder of the pre-migration copy: `<dataDir>/backups/pre-migration/<store>-v<from>-<timestamp>`. */
  backup?: string;
}

/** One SQLite migration step: `to - 1` → `to`. Runs inside the migration transaction. */
export interface SqliteMigration {
  /** The version this step produces. */
  to: number;
  /** What it changes (one line, for the log). */
  description: string;
  up(db: Database.Database): void;
}

/** A versioned SQLite store: its name, current version, schema and migrations. */
export interface SqliteStoreSpec {
  /** Short name used in errors and copy folder names (see STORE_NAME). */
  store: string;
  /** The version this release writes (>= 1). */
  version: number;
  /** Create the current schema in an empty database (runs inside the transaction). */
  create(db: Database.Database): void;
  /** One step per version 1..version, any order. */
  migrations: readonly SqliteMigration[];
}

/** One JSON migration step: takes the payload at `to - 1`, returns it at `to`. Must not mutate shared state. */
export interface JsonMigration {
  to: number;
  description: string;
  up(payload: unknown): unknown;
}

/** A versioned JSON store: `{"schema_version": version, [key]: payload}`. */
export interface JsonStoreSpec {
  store: string;
  version: number;
  /** The key the payload lives under (`registry`). */
  key: string;
  /** One step per version 1..version. Version 0 is the whole unversioned file. */
  migrations: readonly JsonMigration[];
}

/**
 * `YYYYMMDDTHHMMSSmmmZ` (UTC, with milliseconds), the timestamp in copy folder
 * names; sortable as a string, and compared by image/restore-stores.mjs with
 * the time a release became current (written the same way by image/lib.sh).
 */
export function backupTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '');
}

function checkSpec(spec: { store: string; version: number; migrations: readonly { to: number }[] }): void {
  if (!STORE_NAME.test(spec.store)) throw new HomeAgentError('STORE_SPEC_INVALID', `store name "${spec.store}" must match ${STORE_NAME}`);
  if (!Number.isInteger(spec.version) || spec.version < 1) throw new HomeAgentError('STORE_SPEC_INVALID', `store ${spec.store}: version must be a whole number >= 1`);
  for (let v = 1; v <= spec.version; v++) {
    const n = spec.migrations.filter((m) => m.to === v).length;
    if (n !== 1) throw new HomeAgentError('STORE_SPEC_INVALID', `store ${spec.store}: needs exactly one migration to version ${v} (has ${n})`);
  }
}

function stepsFrom<M extends { to: number }>(migrations: readonly M[], from: number, to: number): M[] {
  return migrations.filter((m) => m.to > from && m.to <= to).sort((a, b) => a.to - b.to);
}

/** The copy folder for `store` at version `from`, unique (a `-2`, `-3` suffix within one second). */
function copyFolder(dataDir: string, store: string, from: number, now: number): string {
  const base = path.join(dataDir, PRE_MIGRATION_DIR, `${store}-v${from}-${backupTimestamp(now)}`);
  let dir = base;
  for (let i = 2; existsSync(dir); i++) dir = `${base}-${i}`;
  return dir;
}

/** The file's path inside the data directory, or undefined when it is not inside (no copy can be restored then). */
function relativeInDataDir(loc: StoreLocation): { dataDir: string; rel: string } | undefined {
  if (loc.file === ':memory:' || loc.file === '') return undefined;
  const dataDir = path.resolve(loc.dataDir ?? path.dirname(loc.file));
  const rel = path.relative(dataDir, path.resolve(loc.file));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return { dataDir, rel };
}

/** Tell the log (namespace `homeagent:stores`) and `opts.onMigrated` that a store was migrated. */
function migrated(report: MigrationReport, opts: OpenStoreOptions): void {
  createLogger('stores').info(report, `${report.store} store migrated from schema version ${report.from} to ${report.to}${report.backup ? '; the earlier file is kept in the backup folder' : ''}`);
  opts.onMigrated?.(report);
}

function fsyncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Bring an open SQLite store to `spec.version` (see module comment). Call it
 * right after opening (pragmas set) and before preparing statements. Returns
 * what it did. Throws StoreTooNewError (nothing touched), StoreMigrationError
 * (the store is unchanged; a copy may have been kept) or the better-sqlite3
 * error when the copy cannot be written (then nothing was migrated). The
 * caller closes the connection when this throws.
 */
export function migrateSqlite(db: Database.Database, spec: SqliteStoreSpec, loc: StoreLocation, opts: OpenStoreOptions = {}): MigrationReport {
  checkSpec(spec);
  const file = loc.file;
  const found = db.pragma('user_version', { simple: true }) as number;
  if (found > spec.version) throw new StoreTooNewError(spec.store, file, found, spec.version);
  if (found === spec.version) return { store: spec.store, file, from: found, to: found, created: false };
  const empty = found === 0 && (db.prepare(`SELECT count(*) AS n FROM sqlite_master`).get() as { n: number }).n === 0;
  let backup: string | undefined;
  if (!empty) {
    const where = relativeInDataDir(loc);
    if (where) {
      backup = copyFolder(where.dataDir, spec.store, found, (opts.now ?? Date.now)());
      const dest = path.join(backup, where.rel);
      mkdirSync(path.dirname(dest), { recursive: true });
      // A consistent snapshot (WAL content included) in one statement; keeps user_version.
      db.prepare('VACUUM INTO ?').run(dest);
      fsyncFile(dest);
    }
  }
  const steps = stepsFrom(spec.migrations, found, spec.version);
  const run = db.transaction(() => {
    // Re-read under the write lock: another connection may have migrated meanwhile.
    const now = db.pragma('user_version', { simple: true }) as number;
    if (now === spec.version) return;
    if (now !== found) throw new Error(`version changed from ${found} to ${now} while opening`);
    if (empty) spec.create(db);
    else for (const m of steps) m.up(db);
    db.pragma(`user_version = ${spec.version}`);
  });
  try {
    run.immediate();
  } catch (err) {
    throw new StoreMigrationError(spec.store, file, `migrating from version ${found} to ${spec.version} failed: ${(err as Error).message}; the store was not changed`, backup, { cause: err });
  }
  const report: MigrationReport = { store: spec.store, file, from: found, to: spec.version, created: empty, ...(backup ? { backup } : {}) };
  if (!empty) migrated(report, opts);
  return report;
}

/** Bytes a store's WAL file is cut back to after a checkpoint (PRAGMA journal_size_limit). */
export const WAL_SIZE_LIMIT = 1_048_576;

/**
 * Open a SQLite store the way every store of the box is opened: its folder
 * created (unless `file` is ':memory:'), WAL journal, synchronous FULL, the
 * extra `pragmas` (e.g. 'busy_timeout = 5000'), then migrateSqlite to
 * `spec.version`; the connection is closed when any of it throws.
 * `dataDir` locates the pre-migration copy. Throws as migrateSqlite, or the
 * better-sqlite3 error when the file cannot be opened or is corrupt.
 */
export function openSqliteStore(file: string, spec: SqliteStoreSpec, opts: OpenStoreOptions & { dataDir?: string; pragmas?: readonly string[] } = {}): Database.Database {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // The WAL file shrinks back to 1 MB after a checkpoint instead of staying at its largest (issue 18: bounded on an SD card).
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    for (const p of opts.pragmas ?? []) db.pragma(p);
    migrateSqlite(db, spec, { file, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) }, opts);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** What {@link readVersionedJson} found. `payload` is undefined when the file does not exist. */
export interface VersionedJsonRead extends MigrationReport {
  payload: unknown;
  /** The migrated file's new text when the store was migrated (the caller writes it atomically), else undefined. */
  rewrite?: string;
}

/** The text of a JSON store at `spec.version`: `{"schema_version": N, "<key>": payload}`. */
export function encodeVersionedJson(spec: JsonStoreSpec, payload: unknown): string {
  return JSON.stringify({ schema_version: spec.version, [spec.key]: payload });
}

/**
 * Read a JSON store and bring its payload to `spec.version` (see module
 * comment). `text` is the file's content (undefined: the file does not
 * exist). An older file is copied first; the caller must then write
 * `rewrite` atomically before using the payload (so the copy exists before
 * the file changes). Throws SyntaxError for text that is not JSON,
 * StoreTooNewError for a newer version, StoreMigrationError for a bad version
 * field or a failing step (nothing written), or the fs error when the copy
 * cannot be made.
 */
export function readVersionedJson(text: string | undefined, spec: JsonStoreSpec, loc: StoreLocation, opts: OpenStoreOptions = {}): VersionedJsonRead {
  checkSpec(spec);
  const file = loc.file;
  if (text === undefined) return { store: spec.store, file, from: 0, to: spec.version, created: true, payload: undefined };
  const doc = JSON.parse(text) as unknown;
  const versioned = typeof doc === 'object' && doc !== null && !Array.isArray(doc) && 'schema_version' in doc;
  const found = versioned ? (doc as { schema_version: unknown }).schema_version : 0;
  if (typeof found !== 'number' || !Number.isInteger(found) || found < 0) throw new StoreMigrationError(spec.store, file, `schema_version ${JSON.stringify(found)} is not a whole number >= 0`);
  if (found > spec.version) throw new StoreTooNewError(spec.store, file, found, spec.version);
  let payload: unknown = versioned ? (doc as Record<string, unknown>)[spec.key] : doc;
  if (found === spec.version) return { store: spec.store, file, from: found, to: found, created: false, payload };
  let backup: string | undefined;
  const where = relativeInDataDir(loc);
  if (where && existsSync(file)) {
    backup = copyFolder(where.dataDir, spec.store, found, (opts.now ?? Date.now)());
    const dest = path.join(backup, where.rel);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(file, dest);
    fsyncFile(dest);
  }
  try {
    for (const m of stepsFrom(spec.migrations, found, spec.version)) payload = m.up(payload);
  } catch (err) {
    throw new StoreMigrationError(spec.store, file, `migrating from version ${found} to ${spec.version} failed: ${(err as Error).message}; the file was not changed`, backup, { cause: err });
  }
  const report: MigrationReport = { store: spec.store, file, from: found, to: spec.version, created: false, ...(backup ? { backup } : {}) };
  migrated(report, opts);
  return { ...report, payload, rewrite: encodeVersionedJson(spec, payload) };
}

/** Read a file's text, or undefined when it does not exist (other errors are thrown). */
export function readTextIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
