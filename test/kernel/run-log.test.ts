/**
 * Run log replay (seed 002 §3.2): the model-visible context of every LLM round
 * is rebuilt from the log alone and equals what the provider received —
 * through tool rounds, a post_action rewrite and a preemption with its
 * [interrupt] note. An interrupted turn is logged as interrupted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Plugin } from '../../src/kernel/sdk.js';
import { startHarness } from '../support/kernel-harness.js';
import { deferred } from '../support/fake-provider.js';
import { deriveContext, SqliteRunLog } from '../../src/kernel/run-log.js';
import { waitUntil } from '../support/wait.js';

test('every round\'s context is rebuilt from the log exactly', async () => {
  const gate = deferred();
  let rewrote = false;
  const p: Plugin = {
    name: 'p',
    start(sdk) {
      sdk.registerTool({ name: 'lookup', description: 'x', parameters: { type: 'object', properties: { q: { type: 'string' } } }, handler: (a) => `result for ${String(a.q)}` });
      sdk.registerStage('post_action', (ctx) => {
        // Not in the warm-up turn (system, turn context, user: 3 messages), in the next one (its history too).
        if (!rewrote && ctx.context_messages.length > 3) {
          rewrote = true;
          ctx.context_messages[0] = { ...ctx.context_messages[0]!, content: ctx.context_messages[0]!.content + '\n(rewritten by a plugin)' };
        }
      });
    },
  };
  const h = await startHarness({
    script: [
      { content: 'Warm.' },
      { tool_calls: [{ name: 'lookup', arguments: { q: 'a' } }] },
      { content: 'thinking', tool_calls: [{ name: 'lookup', arguments: { q: 'b' } }], gate: gate.promise },
      { content: 'Urgent handled.' },
      { content: 'thinking again', tool_calls: [{ name: 'lookup', arguments: { q: 'c' } }] },
      { content: 'All done.' },
    ],
    beforeStart: (k) => k.use(p),
  });
  h.settings.set('core.scheduler.preempt_cooldown_ms', 0);
  try {
    await h.kernel.injectInput('t', 'console', 'warm up so the timeline is not empty');
    h.provider.requests.length = 0;
    const main = h.kernel.injectInput('t', 'console', 'research this');
    await h.provider.waitForRequests(2);
    await h.kernel.injectInterrupt('t', 2, 'console', 'the doorbell rang');
    const r = await main;
    assert.equal(r.reply, 'All done.');
    const log = h.kernel.services.runLog;
    const mainId = r.input_id;
    const events = log.turn(mainId);
    // Requests of the main turn: #0, #1 (aborted by the preemption), #3 (resumed), #4.
    const mainRequests = [h.provider.requests[0]!, h.provider.requests[1]!, h.provider.requests[3]!, h.provider.requests[4]!];
    // Rounds: 1 (#0), 2 (#1 aborted, re-requested as #3 after the note), 3 (#4).
    assert.deepEqual(deriveContext(events, 1), mainRequests[0]!.messages);
    const round2 = events.filter((e) => e.type === 'llm.requested' && e.round === 2);
    assert.equal(round2.length, 2, 'round 2 was requested twice (before and after the preemption)');
    assert.deepEqual(deriveContext(events, 2, 0), mainRequests[1]!.messages, 'first request of round 2');
    assert.deepEqual(deriveContext(events, 2), mainRequests[2]!.messages, 'round 2 re-requested after the preemption');
    assert.ok(mainRequests[2]!.messages.some((m) => m.content === '[interrupt] the doorbell rang'));
    assert.deepEqual(deriveContext(events, 3), mainRequests[3]!.messages);
    assert.ok(events.some((e) => e.type === 'context.projected' && e.messages[0]!.content.includes('(rewritten by a plugin)')), 'a rewrite logs a new projection');
    assert.equal(events[events.length - 1]!.type, 'turn.finished');
  } finally {
    gate.resolve();
    await h.close();
  }
});

test('a stopped turn is logged as interrupted; the SQLite log survives reopening', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-runlog-'));
  const file = path.join(dir, 'runlog.db');
  const gate = deferred();
  const h = await startHarness({ script: [{ content: 'Half a sentence. ', pieces: ['Half a sentence. '], gate: gate.promise }] });
  try {
    const running = h.kernel.injectInput('t', 'speaker', 'go');
    await waitUntil(() => h.outputs.some((o) => o.kind === 'sentence'), 'the first sentence');
    h.kernel.stopNow('button');
    const r = await running;
    const events = h.kernel.services.runLog.turn(r.input_id);
    const fin = events.find((e) => e.type === 'turn.finished');
    assert.ok(fin && fin.type === 'turn.finished' && fin.status === 'interrupted' && fin.reply === 'Half a sentence.');
    const db = new SqliteRunLog(file);
    for (const e of events) db.append(e);
    db.close();
    const again = new SqliteRunLog(file);
    assert.deepEqual(again.turn(r.input_id).map((e) => e.type), events.map((e) => e.type));
    assert.deepEqual(deriveContext(again.turn(r.input_id), 1), h.provider.requests[0]!.messages);
    again.close();
  } finally {
    gate.resolve();
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a forgotten turn is a tombstone: the replay says TOMBSTONED, no byte of its text is left; other turns replay exactly', async () => {
  const { readFileSync, readdirSync } = await import('node:fs');
  const { TOMBSTONED, isTombstoned } = await import('../../src/kernel/run-log.js');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-runlog-forget-'));
  const h = await startHarness({ script: [{ content: 'Fine.' }, { content: 'Noted, glorptang.' }, { content: 'Sure.' }] });
  try {
    const first = await h.kernel.injectInput('t', 'console', 'how are you');
    const secret = await h.kernel.injectInput('t', 'console', 'my locker word is glorptang');
    const later = await h.kernel.injectInput('t', 'console', 'thanks');
    const file = path.join(dir, 'runlog.db');
    const db = new SqliteRunLog(file);
    for (const turn of [first, secret, later]) for (const e of h.kernel.services.runLog.turn(turn.input_id)) db.append(e);
    assert.ok(readFileSync(file + '-wal').toString('latin1').includes('glorptang') || readFileSync(file).toString('latin1').includes('glorptang'));
    const at = Date.UTC(2026, 11, 1, 7);
    const n = db.forget([secret.input_id], ['glorptang'], at);
    const mem = h.kernel.services.runLog;
    assert.equal(mem.forget([secret.input_id], ['glorptang'], at), n, 'the in-memory log forgets the same');
    for (const log of [db, mem]) {
      const events = log.turn(secret.input_id);
      assert.ok(events.length > 3 && events.every((e) => e.type === 'tombstone' && e.deleted_at === at && typeof e.of === 'string'));
      assert.ok(isTombstoned(events));
      assert.equal(deriveContext(events, 1), TOMBSTONED);
      // The later turn's context showed the sentence in its history: it is a tombstone there too.
      assert.equal(deriveContext(log.turn(later.input_id), 1), TOMBSTONED);
      assert.doesNotMatch(JSON.stringify(log.tail(1000)), /glorptang|locker/);
      assert.deepEqual(deriveContext(log.turn(first.input_id), 1), h.provider.requests[0]!.messages, 'the turn before replays exactly');
    }
    for (const f of readdirSync(dir)) assert.ok(!readFileSync(path.join(dir, f)).toString('latin1').includes('glorptang'), `${f} holds the forgotten word`);
    db.close();
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
