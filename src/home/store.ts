/**
 * A versioned JSON file (src/kernel/store-version.ts:
 * `{"schema_version": N, "<key>": payload}`) written atomically (write to
 * `<file>.tmp`, fsync, rename, fsync the directory), so a power cut leaves
 * either the old or the new file, never half of one. An older file is copied
 * to `<dataDir>/backups/pre-migration` and migrated when read; a newer one is
 * refused. Writes are coalesced: `write()` schedules one write after
 * `delayMs` (default 200 ms); `flush()` writes at once.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../kernel/log-types.js';
import { StoreMigrationError, StoreTooNewError, encodeVersionedJson, readTextIfExists, readVersionedJson, type JsonStoreSpec, type OpenStoreOptions } from '../kernel/store-version.js';

/** Write `data` to `file` atomically (see module comment). Throws on IO errors. */
export function writeFileAtomic(file: string, data: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  try {
    const dfd = openSync(path.dirname(file), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    /* directories cannot be fsynced on every platform */
  }
}

/** Options of JsonFileStore. */
export interface JsonFileStoreOptions extends OpenStoreOptions {
  /** The store's name, version, payload key and migrations. */
  spec: JsonStoreSpec;
  /** The data directory the file belongs to (pre-migration copies go under its backups/). Default: the file's directory. */
  dataDir?: string;
  /** Coalescing delay of `write()`, ms. Default 200. */
  delayMs?: number;
}

/** See module comment. `T` is the payload's type at the spec's current version. */
export class JsonFileStore<T> {
  private pending: (() => T) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly delayMs: number;

  constructor(readonly file: string, private readonly log: Logger, private readonly opts: JsonFileStoreOptions) {
    this.delayMs = opts.delayMs ?? 200;
  }

  /**
   * The stored payload at the current version, or undefined when the file is
   * missing or unreadable (not JSON: logged; the next write replaces it). An
   * older file is copied and migrated first (the migrated file is written
   * before this returns). Throws StoreTooNewError when the file was written
   * by a newer release and StoreMigrationError when it cannot be migrated:
   * the caller must not write over it then.
   */
  read(): T | undefined {
    let text: string | undefined;
    try {
      text = readTextIfExists(this.file);
    } catch (err) {
      this.log.warn({ file: this.file, err: (err as Error).message }, 'stored file unreadable; starting empty');
      return undefined;
    }
    try {
      const r = readVersionedJson(text, this.opts.spec, { file: this.file, ...(this.opts.dataDir ? { dataDir: this.opts.dataDir } : {}) }, this.opts);
      if (r.rewrite !== undefined) writeFileAtomic(this.file, r.rewrite);
      return r.payload as T | undefined;
    } catch (err) {
      if (err instanceof StoreTooNewError || err instanceof StoreMigrationError) throw err;
      this.log.warn({ file: this.file, err: (err as Error).message }, 'stored file unreadable; starting empty');
      return undefined;
    }
  }

  /** Schedule a write of `snapshot()` (taken when the write happens). */
  write(snapshot: () => T): void {
    this.pending = snapshot;
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), this.delayMs);
    this.timer.unref();
  }

  /** Write the pending snapshot now, at the spec's current version. Errors are logged. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const snap = this.pending;
    this.pending = undefined;
    if (!snap) return;
    try {
      writeFileAtomic(this.file, encodeVersionedJson(this.opts.spec, snap()));
    } catch (err) {
      this.log.error({ file: this.file, err: (err as Error).message }, 'cannot write store file');
    }
  }
}
