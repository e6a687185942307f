/**
 * Issue 18 "Pictures", the store (src/memory/pictures.ts): pictures stored
 * once by sha256 under <data dir>/images/ab/<sha>.<ext>, verified on read (a
 * damaged file is PICTURE_DAMAGED and never served), the size budget
 * (oldest unreferenced first, referenced kept), orphaned files swept, and
 * a version 3 memory store upgraded to version 4 with its rows intact.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { FakeClock } from '../../src/kernel/clock.js';
import { MEMORY_STORE, openMemoryDb } from '../../src/memory/db.js';
import { PictureDamagedError, PictureFormatError, PictureNotFoundError, PictureStore } from '../../src/memory/pictures.js';
import { quietLog, tempDir } from './helpers.js';

/** A distinct small JPEG per `seed` (a flat colour), a few hundred bytes. */
async function jpeg(seed: number, size = 32): Promise<Buffer> {
  return sharp({ create: { width: size, height: size, channels: 3, background: { r: (seed * 53) % 256, g: (seed * 97) % 256, b: (seed * 31) % 256 } } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function storeIn(dir: string, clock: FakeClock, maxBytes = 1 << 30): { store: PictureStore; db: Database.Database; budget: { bytes: number } } {
  const db = openMemoryDb(dir);
  const budget = { bytes: maxBytes };
  const store = new PictureStore({ db, dataDir: dir, log: quietLog(), now: () => clock.now(), maxBytes: () => budget.bytes });
  return { store, db, budget };
}

/** Every file under images/ (relative names). */
function imageFiles(dir: string): string[] {
  const root = path.join(dir, 'images');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((d) => readdirSync(path.join(root, d)).map((f) => `${d}/${f}`)).sort();
}

describe('picture store', () => {
  it('stores the same bytes once: one file named by its sha256, two entries', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 8, 0));
    const { store, db } = storeIn(dir, clock);
    try {
      const img = await jpeg(1);
      const a = await store.put(img, { source: 'front door' });
      clock.advance(60_000);
      const b = await store.put(Buffer.from(img), { source: 'front door' });
      assert.equal(a.created, true);
      assert.equal(b.created, false);
      assert.equal(a.picture.sha256, sha(img));
      assert.deepEqual(imageFiles(dir), [`${sha(img).slice(0, 2)}/${sha(img)}.jpg`]);
      assert.deepEqual(readFileSync(a.picture.file), img, 'the bytes as given');
      assert.notEqual(a.entry.id, b.entry.id, 'each snapshot is remembered with its time');
      assert.equal(a.entry.description, 'snapshot from front door at 2026-12-01 08:00 UTC');
      assert.equal(a.entry.described_by, 'default');
      // The same picture shown twice in one turn is one entry.
      const c = await store.put(img, { source: 'tool:camera_snapshot', turn: 't1' });
      const d = await store.put(img, { source: 'tool:camera_snapshot', turn: 't1' });
      assert.equal(c.entry.id, d.entry.id);
      assert.equal(Number(db.prepare('SELECT count(*) FROM pictures').pluck().get()), 1);
      assert.equal(Number(db.prepare('SELECT count(*) FROM picture_entries').pluck().get()), 3);
      assert.deepEqual(store.read(sha(img)), img, 'read back, verified');
      // A caption from the camera is the description.
      const e = await store.put(await jpeg(2), { source: 'garden', caption: 'a cat on the fence' });
      assert.equal(e.entry.description, 'a cat on the fence');
      assert.equal(e.entry.described_by, 'camera');
      // The model's words replace the default sentence, not the camera's caption.
      assert.equal(store.describe([a.entry.id, e.entry.id], '  The front door, closed;  a parcel on the mat. '), 1);
      assert.equal(store.entry(a.entry.id)!.description, 'The front door, closed; a parcel on the mat.');
      assert.equal(store.entry(e.entry.id)!.description, 'a cat on the fence');
    } finally {
      db.close();
      cleanup();
    }
  });

  it('refuses bytes that are not an image (PICTURE_NOT_IMAGE) and stores nothing', async () => {
    const { dir, cleanup } = tempDir();
    const { store, db } = storeIn(dir, new FakeClock(1000));
    try {
      await assert.rejects(store.put(Buffer.from('<html>401 Unauthorized</html>'), { source: 'camera' }), (e: unknown) => e instanceof PictureFormatError && e.code === 'PICTURE_NOT_IMAGE');
      assert.deepEqual(imageFiles(dir), []);
      assert.equal(Number(db.prepare('SELECT count(*) FROM picture_entries').pluck().get()), 0);
    } finally {
      db.close();
      cleanup();
    }
  });

  it('detects a damaged file on read and does not serve it; storing the bytes again repairs it', async () => {
    const { dir, cleanup } = tempDir();
    const { store, db } = storeIn(dir, new FakeClock(1000));
    try {
      const img = await jpeg(3);
      const { picture } = await store.put(img, { source: 'camera' });
      const bad = Buffer.from(img);
      bad[bad.length >> 1] = bad[bad.length >> 1]! ^ 0xff;
      writeFileSync(picture.file, bad);
      assert.throws(
        () => store.read(picture.sha256),
        (e: unknown) => e instanceof PictureDamagedError && e.code === 'PICTURE_DAMAGED' && e.message.includes(picture.sha256) && e.message.includes('not served'),
      );
      // A missing file is damaged too; an unknown hash is not found.
      await store.put(img, { source: 'camera' });
      assert.deepEqual(store.read(picture.sha256), img, 'the same bytes stored again rewrite the damaged copy');
      assert.throws(() => store.read('0'.repeat(64)), (e: unknown) => e instanceof PictureNotFoundError && e.code === 'PICTURE_NOT_FOUND');
    } finally {
      db.close();
      cleanup();
    }
  });

  it('keeps the budget: the oldest unreferenced pictures go first, referenced ones stay, orphans are swept', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 6, 0));
    const { store, db, budget } = storeIn(dir, clock);
    try {
      const imgs = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => jpeg(10 + i)));
      const put = async (i: number, turn?: string) => {
        clock.advance(600_000);
        return store.put(imgs[i]!, { source: 'camera', ...(turn ? { turn } : {}) });
      };
      // 0 is the oldest but a conversation looked at it; 1, 2, 3 are periodic snapshots; 1 is seen again later.
      await put(0, 'turn-a');
      await put(1);
      await put(2);
      await put(3);
      await put(1);
      const size = (i: number) => imgs[i]!.length;
      // One byte too few for the four: one picture has to go.
      const total = [0, 1, 2, 3].reduce((n, i) => n + size(i), 0);
      budget.bytes = total - 1;
      const r1 = store.prune();
      assert.equal(r1.evicted, 1);
      assert.equal(store.picture(sha(imgs[2]!)), undefined, '2: the oldest unreferenced by when it was last taken (1 was taken again later)');
      assert.ok(store.picture(sha(imgs[0]!)), '0 is referenced: kept though oldest');
      assert.ok(store.picture(sha(imgs[1]!)) && store.picture(sha(imgs[3]!)));
      assert.equal(Number(db.prepare('SELECT count(*) FROM picture_entries WHERE sha256 = ?').pluck().get(sha(imgs[2]!))), 0, 'its entries go with it');
      assert.ok(!imageFiles(dir).some((f) => f.includes(sha(imgs[2]!))), 'its file is gone');
      // On write: a new snapshot over the budget pushes out the next oldest unreferenced (3), then 1.
      budget.bytes = size(0) + size(4) + size(5);
      await put(4);
      await put(5);
      assert.deepEqual(
        (db.prepare('SELECT sha256 FROM pictures').pluck().all() as string[]).sort(),
        [sha(imgs[0]!), sha(imgs[4]!), sha(imgs[5]!)].sort(),
      );
      // Only referenced pictures left over the budget: kept, reported.
      budget.bytes = 1;
      const r2 = store.prune();
      assert.equal(store.picture(sha(imgs[0]!))?.sha256, sha(imgs[0]!));
      assert.equal(r2.overBudget, true);
      // A file no row names (a crash after a forgetting committed) is swept; a stored one is not.
      const stray = path.join(dir, 'images', 'ab', `ab${'0'.repeat(62)}.jpg`);
      mkdirSync(path.dirname(stray), { recursive: true });
      writeFileSync(stray, 'x');
      budget.bytes = 1 << 30;
      assert.equal(store.prune().orphans, 1);
      assert.equal(existsSync(stray), false);
      assert.deepEqual(store.read(sha(imgs[0]!)), imgs[0]);
    } finally {
      db.close();
      cleanup();
    }
  });

  it('upgrades a version 3 memory store to version 4 and keeps its rows', () => {
    const { dir, cleanup } = tempDir();
    try {
      openMemoryDb(dir).close();
      const old = new Database(path.join(dir, 'memory.db'));
      // Back to version 3 as the release before pictures left it.
      old.exec('DROP TABLE picture_entries; DROP TABLE pictures');
      old.pragma('user_version = 3');
      old.prepare("INSERT INTO forgotten(time, items) VALUES(5, 2)").run();
      old.prepare("INSERT INTO people(name, created, last_seen) VALUES('Anna', 1, 2)").run();
      old.close();
      const reports: Array<{ from: number; to: number; backup?: string }> = [];
      const db = openMemoryDb(dir, 'memory.db', { onMigrated: (r) => reports.push(r) });
      try {
        assert.equal(MEMORY_STORE.version, 4);
        assert.equal(db.pragma('user_version', { simple: true }), 4);
        assert.equal(reports[0]?.from, 3);
        assert.equal(reports[0]?.to, 4);
        assert.ok(reports[0]?.backup && existsSync(reports[0].backup), 'a pre-migration copy was kept');
        assert.deepEqual(db.prepare('SELECT name FROM people').pluck().all(), ['Anna']);
        assert.equal(Number(db.prepare('SELECT items FROM forgotten').pluck().get()), 2);
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
        assert.ok(tables.includes('pictures') && tables.includes('picture_entries'));
      } finally {
        db.close();
      }
    } finally {
      cleanup();
    }
  });
});
