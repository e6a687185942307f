/**
 * A JSON file written atomically (write to `<file>.tmp`, fsync, rename, fsync
 * the directory), so a power cut leaves either the old or the new file, never
 * half of one. Writes are coalesced: `write()` schedules one write after
 * `delayMs` (default 200 ms); `flush()` writes at once.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../kernel/log-types.js';

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

/** See module comment. */
export class JsonFileStore<T> {
  private pending: (() => T) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly file: string, private readonly log: Logger, private readonly delayMs = 200) {}

  /** The stored value, or undefined when missing or unreadable (logged). */
  read(): T | undefined {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return undefined;
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      this.log.warn({ file: this.file, err: (err as Error).message }, 'stored registry unreadable; starting empty');
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

  /** Write the pending snapshot now. Errors are logged. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const snap = this.pending;
    this.pending = undefined;
    if (!snap) return;
    try {
      writeFileAtomic(this.file, JSON.stringify(snap()));
    } catch (err) {
      this.log.error({ file: this.file, err: (err as Error).message }, 'cannot write registry file');
    }
  }
}
