/**
 * Pictures (issue 18 "Pictures"): camera snapshots and images given to the
 * model, stored once by the sha256 of their bytes under
 * `<data dir>/images/<first two hex>/<sha256>.<ext>` (content-addressed: the
 * same bytes twice are one file), verified on read (the hash is computed
 * again; a damaged file is reported with PictureDamagedError and never
 * served), and remembered in the memory store (`pictures`,
 * `picture_entries`, src/memory/db.ts version 4) with their time, source and
 * description.
 *
 * The size budget (core.memory.images_max_mb) is kept on every write and by
 * the pictures plugin's background pass: the oldest unreferenced pictures go
 * first (by the newest time they were taken or shown); a picture a
 * conversation looked at (an entry with a turn) is referenced and goes only
 * when that memory is forgotten (MemorySystem.forget calls
 * {@link PictureStore.forgetInTransaction}, then {@link PictureStore.removeFiles}).
 * Files with no row (a crash between a forgetting's commit and its unlink, a
 * half-written temporary file) are removed by {@link PictureStore.prune}.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { HomeAgentError } from '../kernel/errors.js';
import type { Logger } from '../kernel/log-types.js';
import type { Db } from './db.js';

/** The folder of the pictures, relative to the data directory. */
export const IMAGES_DIR = 'images';

/** Image formats stored, by sharp's format name, with the file extension used. */
const FORMATS: Readonly<Record<string, string>> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', avif: 'avif', heif: 'heic', tiff: 'tif' };

/** Bytes given as a picture are not an image sharp can read (empty, truncated, HTML). Code PICTURE_NOT_IMAGE. */
export class PictureFormatError extends HomeAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PICTURE_NOT_IMAGE', message, options);
  }
}

/** No stored picture has that sha256 (never stored, evicted under the budget, or forgotten). Code PICTURE_NOT_FOUND. */
export class PictureNotFoundError extends HomeAgentError {
  constructor(readonly sha256: string, message: string) {
    super('PICTURE_NOT_FOUND', message);
  }
}

/**
 * A stored picture's file no longer holds the bytes it was stored with (its
 * sha256 differs: SD card corruption, a file changed by hand) or is missing
 * while its row is there. Code PICTURE_DAMAGED. The picture is not served.
 */
export class PictureDamagedError extends HomeAgentError {
  constructor(readonly sha256: string, readonly file: string, message: string) {
    super('PICTURE_DAMAGED', message);
  }
}

/** Who described a picture: the model that looked at it, the camera's caption, or the default sentence. */
export type DescribedBy = 'model' | 'camera' | 'default';

/** One memory of a picture (a row of `picture_entries`); `time` ms since epoch. */
export interface PictureEntry {
  id: number;
  sha256: string;
  time: number;
  /** A camera's name, or `turn:<plugin>` for an image given with an input. */
  source: string;
  /** The input id of the turn that showed it to the model; null for a snapshot no conversation looked at. */
  turn: string | null;
  description: string;
  described_by: DescribedBy;
}

/** A stored picture file (a row of `pictures`): size in bytes and pixels, `stored` ms since epoch. */
export interface PictureFile {
  sha256: string;
  ext: string;
  bytes: number;
  width: number;
  height: number;
  stored: number;
  /** Absolute path of the file. */
  file: string;
}

/** What to remember with a picture put into the store. */
export interface PictureMeta {
  /** When it was taken or shown, ms since epoch (default: the store's clock). */
  time?: number;
  /** A camera's name (`plugin.camera.name`) or `turn:<plugin>`. */
  source: string;
  /** The turn (input id) that showed it to the model, when one did. */
  turn?: string;
  /** A caption the camera gave; absent: "snapshot from <source> at <time>" until the model describes it. */
  caption?: string;
}

/** What {@link PictureStore.put} did: the picture, its entry, and whether the file was new. */
export interface PutResult {
  picture: PictureFile;
  entry: PictureEntry;
  /** False when the same bytes were stored before (one file, another entry). */
  created: boolean;
}

/** Constructor options. `maxBytes` is read on every write and prune (the setting may change). */
export interface PictureStoreOptions {
  db: Db;
  dataDir: string;
  log: Logger;
  /** Wall time, ms since epoch. */
  now: () => number;
  /** The size budget of all picture files, bytes. */
  maxBytes: () => number;
}

/** What a prune pass removed. */
export interface PruneResult {
  /** Unreferenced pictures evicted under the budget. */
  evicted: number;
  /** Bytes freed by evicting them. */
  freedBytes: number;
  /** Files on disk with no row (or temporary files), removed. */
  orphans: number;
  /** Bytes of all pictures after the pass, and whether it is still over budget (only referenced pictures left). */
  totalBytes: number;
  overBudget: boolean;
}

const SHA_RE = /^[0-9a-f]{64}$/;

/** The default description of a picture nothing described: "snapshot from <source> at <ISO time minute>". */
export function defaultDescription(source: string, time: number): string {
  return `snapshot from ${source} at ${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** See the module comment. */
export class PictureStore {
  readonly dir: string;
  private readonly db: Db;
  private readonly log: Logger;

  constructor(private readonly opts: PictureStoreOptions) {
    this.db = opts.db;
    this.log = opts.log;
    this.dir = path.join(opts.dataDir, IMAGES_DIR);
  }

  /** Path of the file of `sha256` with extension `ext`: `<dir>/<sha[0..2]>/<sha>.<ext>`. */
  fileOf(sha256: string, ext: string): string {
    return path.join(this.dir, sha256.slice(0, 2), `${sha256}.${ext}`);
  }

  /**
   * Store `bytes` (any image format sharp reads; kept as given, so what the
   * model saw is what is stored) once by sha256 and remember it with `meta`.
   * Same bytes again: no second file; a second entry unless the same turn
   * already has one for it (then that entry is returned). The file is
   * written to a temporary name, fsynced and renamed, so a crash leaves
   * either no file or the whole one. Then the budget is kept (prune).
   * Throws PictureFormatError (PICTURE_NOT_IMAGE) when the bytes are not an image.
   */
  async put(bytes: Buffer, meta: PictureMeta): Promise<PutResult> {
    let info: { format: string; width: number; height: number };
    try {
      const m = await sharp(bytes, { failOn: 'error', limitInputPixels: 50_000_000 }).metadata();
      if (!m.format || !m.width || !m.height) throw new Error('no format or size');
      info = { format: m.format, width: m.width, height: m.height };
    } catch (err) {
      throw new PictureFormatError(`not an image that can be stored (${bytes.length} bytes): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const ext = FORMATS[info.format];
    if (!ext) throw new PictureFormatError(`image format ${info.format} is not stored (JPEG, PNG, WebP, GIF, AVIF, HEIF or TIFF)`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const now = this.opts.now();
    const time = meta.time ?? now;
    // From here on synchronous: two puts of the same bytes cannot interleave. A damaged copy is written again.
    let row = this.picture(sha256);
    let created = false;
    const file = this.fileOf(sha256, row?.ext ?? ext);
    if (!row || !this.intact(file, sha256)) {
      this.writeAtomic(file, bytes);
      created = !row;
    }
    if (!row) {
      this.db.prepare('INSERT INTO pictures(sha256, ext, bytes, width, height, stored) VALUES(?, ?, ?, ?, ?, ?)').run(sha256, ext, bytes.length, info.width, info.height, now);
      row = this.picture(sha256)!;
    }
    let entry = meta.turn !== undefined ? (this.db.prepare('SELECT * FROM picture_entries WHERE sha256 = ? AND turn = ? ORDER BY id LIMIT 1').get(sha256, meta.turn) as PictureEntry | undefined) : undefined;
    if (!entry) {
      const caption = meta.caption?.trim();
      const description = caption ? caption.slice(0, 1000) : defaultDescription(meta.source, time);
      const id = Number(
        this.db
          .prepare('INSERT INTO picture_entries(sha256, time, source, turn, description, described_by) VALUES(?, ?, ?, ?, ?, ?)')
          .run(sha256, time, meta.source, meta.turn ?? null, description, caption ? 'camera' : 'default').lastInsertRowid,
      );
      entry = this.entry(id)!;
    }
    this.prune({ sweepOrphans: false });
    return { picture: row, entry, created };
  }

  /** A stored picture by sha256 (hex), or undefined. */
  picture(sha256: string): PictureFile | undefined {
    const r = this.db.prepare('SELECT sha256, ext, bytes, width, height, stored FROM pictures WHERE sha256 = ?').get(sha256) as Omit<PictureFile, 'file'> | undefined;
    return r ? { ...r, file: this.fileOf(r.sha256, r.ext) } : undefined;
  }

  /** An entry by id, or undefined. */
  entry(id: number): PictureEntry | undefined {
    return this.db.prepare('SELECT * FROM picture_entries WHERE id = ?').get(id) as PictureEntry | undefined;
  }

  /**
   * The bytes of a stored picture, after computing their sha256 again.
   * Throws PictureNotFoundError (PICTURE_NOT_FOUND) when no picture has that
   * hash, PictureDamagedError (PICTURE_DAMAGED) when its file is missing or
   * its bytes no longer hash to it (logged as a warning; not served).
   */
  read(sha256: string): Buffer {
    const row = SHA_RE.test(sha256) ? this.picture(sha256) : undefined;
    if (!row) throw new PictureNotFoundError(sha256, `no stored picture ${sha256} (never stored, removed under the size budget, or forgotten)`);
    let bytes: Buffer;
    try {
      bytes = readFileSync(row.file);
    } catch (err) {
      this.log.warn({ sha256, file: row.file, err: (err as Error).message }, 'picture file missing');
      throw new PictureDamagedError(sha256, row.file, `picture ${sha256}: its file ${row.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha256) {
      this.log.warn({ sha256, actual, file: row.file }, 'picture file damaged: its bytes do not match their hash; not served');
      throw new PictureDamagedError(sha256, row.file, `picture ${sha256} is damaged: ${row.file} now hashes to ${actual} (${bytes.length} of ${row.bytes} bytes); it is not served`);
    }
    return bytes;
  }

  /**
   * Set the description of entries that still have none of their own (the
   * default sentence) to what the model said when it looked at them. Returns
   * how many entries changed. `text` is trimmed and cut at 1000 characters.
   */
  describe(entryIds: readonly number[], text: string): number {
    const t = text.trim().replace(/\s+/g, ' ').slice(0, 1000);
    if (t === '' || entryIds.length === 0) return 0;
    const st = this.db.prepare("UPDATE picture_entries SET description = ?, described_by = 'model' WHERE id = ? AND described_by = 'default'");
    let n = 0;
    for (const id of entryIds) n += st.run(t, id).changes;
    return n;
  }

  /** Entries taken or shown in [from, to) (ms), newest first, at most `limit`; `source` filters by camera name (case-insensitive). */
  entriesBetween(from: number, to: number, limit = 20, source?: string): PictureEntry[] {
    const src = source?.trim();
    return (
      src
        ? this.db.prepare('SELECT * FROM picture_entries WHERE time >= ? AND time < ? AND source = ? COLLATE NOCASE ORDER BY time DESC, id DESC LIMIT ?').all(from, to, src, limit)
        : this.db.prepare('SELECT * FROM picture_entries WHERE time >= ? AND time < ? ORDER BY time DESC, id DESC LIMIT ?').all(from, to, limit)
    ) as PictureEntry[];
  }

  /** The entries of `turns` (input ids), oldest first. */
  entriesOfTurns(turns: ReadonlySet<string>): PictureEntry[] {
    if (turns.size === 0) return [];
    return this.db.prepare('SELECT * FROM picture_entries WHERE turn IN (SELECT value FROM json_each(?)) ORDER BY time, id').all(JSON.stringify([...turns])) as PictureEntry[];
  }

  /** Number of stored pictures and their bytes, with how many are referenced (for memory_introspect and status). */
  stats(): { pictures: number; bytes: number; referenced: number; entries: number; budget_bytes: number } {
    const r = this.db.prepare('SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM pictures').get() as { n: number; b: number };
    const referenced = Number(this.db.prepare('SELECT count(DISTINCT sha256) FROM picture_entries WHERE turn IS NOT NULL').pluck().get());
    const entries = Number(this.db.prepare('SELECT count(*) FROM picture_entries').pluck().get());
    return { pictures: r.n, bytes: r.b, referenced, entries, budget_bytes: this.opts.maxBytes() };
  }

  /**
   * Keep the budget: while the pictures' bytes exceed maxBytes, remove the
   * oldest unreferenced picture (no entry with a turn), ordered by the
   * newest time it was taken or shown, with its entries and file. Referenced
   * pictures are never removed here (then `overBudget` stays true and a
   * warning is logged). `sweepOrphans` (default true; the background pass):
   * also remove files under images/ that no row names. Never throws for a
   * file that is already gone.
   */
  prune(opts: { sweepOrphans?: boolean } = {}): PruneResult {
    const max = Math.max(0, this.opts.maxBytes());
    let total = Number(this.db.prepare('SELECT coalesce(sum(bytes), 0) FROM pictures').pluck().get());
    let evicted = 0;
    let freedBytes = 0;
    if (total > max) {
      const victims = this.db
        .prepare(
          `SELECT p.sha256, p.ext, p.bytes FROM pictures p
           WHERE NOT EXISTS (SELECT 1 FROM picture_entries e WHERE e.sha256 = p.sha256 AND e.turn IS NOT NULL)
           ORDER BY coalesce((SELECT max(time) FROM picture_entries e WHERE e.sha256 = p.sha256), p.stored), p.stored`,
        )
        .iterate() as IterableIterator<{ sha256: string; ext: string; bytes: number }>;
      const gone: Array<{ sha256: string; ext: string }> = [];
      for (const v of victims) {
        if (total <= max) break;
        gone.push(v);
        total -= v.bytes;
        freedBytes += v.bytes;
      }
      this.db.transaction(() => {
        for (const v of gone) {
          this.db.prepare('DELETE FROM picture_entries WHERE sha256 = ?').run(v.sha256);
          this.db.prepare('DELETE FROM pictures WHERE sha256 = ?').run(v.sha256);
        }
      })();
      for (const v of gone) this.unlink(this.fileOf(v.sha256, v.ext));
      evicted = gone.length;
      if (evicted > 0) this.log.info({ evicted, freed_bytes: freedBytes, total_bytes: total, budget_bytes: max }, 'pictures removed under the size budget (oldest unreferenced first)');
    }
    const orphans = opts.sweepOrphans === false ? 0 : this.sweepOrphans();
    const overBudget = total > max;
    if (overBudget) this.log.warn({ total_bytes: total, budget_bytes: max }, 'pictures over their size budget: only pictures conversations refer to are left (they go when forgotten); raise core.memory.images_max_mb or forget some');
    return { evicted, freedBytes, orphans, totalBytes: total, overBudget };
  }

  /**
   * Inside a forgetting transaction (MemorySystem.forget): delete the
   * entries of the forgotten `turns` and those whose description `matches`
   * the words forgotten, then the pictures no entry refers to any more.
   * Returns the entries deleted and the files to remove once the
   * transaction committed ({@link removeFiles}).
   */
  forgetInTransaction(turns: ReadonlySet<string>, matches: (text: string) => boolean): { entries: number; pictures: number; files: string[]; descriptions: string[] } {
    const rows = this.db.prepare('SELECT id, sha256, turn, description FROM picture_entries').all() as Array<{ id: number; sha256: string; turn: string | null; description: string }>;
    const gone = rows.filter((r) => (r.turn !== null && turns.has(r.turn)) || matches(r.description));
    const del = this.db.prepare('DELETE FROM picture_entries WHERE id = ?');
    for (const r of gone) del.run(r.id);
    const files: string[] = [];
    for (const sha of new Set(gone.map((r) => r.sha256))) {
      if (this.db.prepare('SELECT 1 FROM picture_entries WHERE sha256 = ? LIMIT 1').get(sha)) continue;
      const p = this.picture(sha);
      if (!p) continue;
      this.db.prepare('DELETE FROM pictures WHERE sha256 = ?').run(sha);
      files.push(p.file);
    }
    return { entries: gone.length, pictures: files.length, files, descriptions: gone.map((r) => r.description) };
  }

  /** Remove files (after the forgetting that dropped their rows committed); a file already gone is fine. */
  removeFiles(files: readonly string[]): void {
    for (const f of files) this.unlink(f);
  }

  /** Whether `file` holds the bytes of `sha256` (a stored copy to keep rather than write again). */
  private intact(file: string, sha256: string): boolean {
    try {
      return createHash('sha256').update(readFileSync(file)).digest('hex') === sha256;
    } catch {
      return false;
    }
  }

  private writeAtomic(file: string, bytes: Buffer): void {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  }

  private unlink(file: string): void {
    try {
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ file, err: (err as Error).message }, 'picture file could not be removed');
    }
  }

  /** Remove files under images/ no row names (and temporary files). Returns how many. */
  private sweepOrphans(): number {
    if (!existsSync(this.dir)) return 0;
    const known = new Set((this.db.prepare('SELECT sha256, ext FROM pictures').all() as Array<{ sha256: string; ext: string }>).map((r) => `${r.sha256}.${r.ext}`));
    let n = 0;
    for (const sub of readdirSync(this.dir)) {
      const d = path.join(this.dir, sub);
      if (!/^[0-9a-f]{2}$/.test(sub) || !statSync(d).isDirectory()) continue;
      for (const f of readdirSync(d)) {
        if (known.has(f)) continue;
        this.unlink(path.join(d, f));
        n++;
      }
    }
    if (n > 0) this.log.info({ orphans: n }, 'picture files no memory refers to removed');
    return n;
  }
}
