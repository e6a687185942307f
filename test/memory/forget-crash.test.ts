/**
 * kill -9 during forgetting (issue 18): a child forgets made-up words one by
 * one (memory and run log) and prints each acknowledged one; it is
 * SIGKILLed mid-stream. Then no file of the memory store or the run log (the
 * databases, their -wal and -shm, as the kill left them) holds an
 * acknowledged word, byte for byte; reopened, the store is intact and every
 * word not acknowledged is either wholly there (the old state: its turn,
 * note and fact) or wholly gone (the new one) — and when the memory forgot
 * it, so did the run log.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { killAfterAcks, makeMemory, tempDir } from './helpers.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const word = (i: number): string => `vexil${i}qarn`;

it('kill -9 while forgetting leaves the old state or the new one, never an acknowledged word', async () => {
  const { dir, cleanup } = tempDir('ha-forget-crash-');
  try {
    const target = 6;
    const out = await killAfterAcks(path.join(here, 'fixtures', 'forget-loop.ts'), dir, /^ack /m, target, 120_000);
    const acked = out.split('\n').filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
    assert.ok(acked.length >= target, out.slice(-300));
    assert.ok(!out.includes('all\n'), 'killed before it finished');
    // The files as the kill left them (WAL not yet recovered).
    const files = readdirSync(dir).filter((f) => f.startsWith('memory.db') || f.startsWith('runlog.db'));
    assert.ok(files.includes('memory.db'));
    const bytes = files.map((f) => readFileSync(path.join(dir, f)).toString('latin1'));
    for (const w of acked) for (const [i, b] of bytes.entries()) assert.ok(!b.includes(w), `${files[i]} holds the acknowledged ${w}`);
    const mem = makeMemory({ dir });
    const runLog = new SqliteRunLog(path.join(dir, 'runlog.db'));
    try {
      assert.equal(mem.db.pragma('integrity_check', { simple: true }), 'ok');
      const count = (sql: string, w: string): number => Number(mem.db.prepare(sql).pluck().get(`%${w}%`));
      let old = 0;
      for (let i = 0; i < 120; i++) {
        const w = word(i);
        const where = [
          mem.timeline(1e9).some((e) => e.input.includes(w)) || count('SELECT count(*) FROM docs WHERE input LIKE ?', w) > 0,
          count('SELECT count(*) FROM docs WHERE response LIKE ? AND kind = \'note\'', w) > 0,
          count('SELECT count(*) FROM entities WHERE name LIKE ?', w) > 0,
        ];
        const logged = runLog.turn(`t${i}`).some((e) => JSON.stringify(e).includes(w));
        if (acked.includes(w)) assert.deepEqual([...where, logged], [false, false, false, false], `${w} acknowledged as forgotten`);
        else {
          assert.ok(where.every((x) => x) || where.every((x) => !x), `${w}: the old state or the new one, not a mix (${where})`);
          if (!where[0]) assert.equal(logged, false, `${w}: the memory forgot it, so did the run log`);
          if (where[0]) old++;
        }
      }
      assert.ok(old > 0, 'words not reached are still there');
      for (const f of readdirSync(dir).filter((x) => x.startsWith('memory.db'))) for (const w of acked) assert.ok(!readFileSync(path.join(dir, f)).toString('latin1').includes(w), `${f} after reopening`);
    } finally {
      mem.close();
      runLog.close();
    }
  } finally {
    cleanup();
  }
});
