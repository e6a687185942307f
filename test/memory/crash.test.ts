/**
 * kill -9 during commits loses nothing acknowledged: a child commits in a
 * loop (graph relations, documents, context events with pruning) and prints
 * each acknowledged key; it is SIGKILLed mid-stream; reopening finds every
 * printed key.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { killAfterAcks, makeMemory, tempDir } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));

it('kill -9 while committing loses nothing acknowledged', async () => {
  const { dir, cleanup } = tempDir('ha-mem-crash-');
  try {
    const target = 150;
    const out = await killAfterAcks(path.join(here, 'fixtures', 'commit-loop.ts'), dir, /^ack ev /m, target, 60_000);
    const acks = out.split('\n').filter((l) => l.startsWith('ack '));
    assert.ok(acks.length >= target * 3);
    const mem = makeMemory({ dir });
    try {
      let seenEventsInDocsOrWindow = 0;
      for (const line of acks) {
        const [, kind, key] = line.split(' ');
        if (kind === 'rel') {
          const e = mem.graph.resolve(`人物${key}`);
          assert.ok(e, `entity 人物${key}`);
          assert.ok(mem.graph.relationsOf(e.id).some((r) => r.target_name === `城市${key}`), `relation ${key}`);
        } else if (kind === 'doc') {
          assert.ok(mem.db.prepare('SELECT 1 FROM docs WHERE title = ?').get(`note-${key}`), `doc ${key}`);
        } else if (kind === 'ev') {
          const inWindow = mem.timeline(1e9).some((e) => e.id === `ev-${key}`);
          const inDocs = mem.db.prepare('SELECT 1 FROM docs WHERE event_id = ?').get(`ev-${key}`) !== undefined;
          assert.ok(inWindow !== inDocs, `event ev-${key} exactly once (window ${inWindow}, docs ${inDocs})`);
          seenEventsInDocsOrWindow++;
        }
      }
      assert.ok(seenEventsInDocsOrWindow >= target);
      assert.equal(mem.db.pragma('integrity_check', { simple: true }), 'ok');
    } finally {
      mem.close();
    }
  } finally {
    cleanup();
  }
});
