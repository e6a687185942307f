/**
 * Run log contract suite (src/kernel/run-log.ts `RunLog`): every
 * implementation (MemoryRunLog, SqliteRunLog) must pass it. What a run log
 * promises (seed 002 §3 "事件溯源会话"): append-only, a monotonic sequence
 * number and a time on every event, `turn(id)` gives that turn's events in
 * order and unchanged, `tail(n)` the last n in order, an appended event is a
 * copy (later changes to the caller's object do not reach the log). Durable
 * implementations also keep everything across a reopen, with sequence
 * numbers that keep growing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunEvent, RunLog, StoredRunEvent } from '../../../src/kernel/run-log.js';

/** A fresh, empty run log; `reopen` (durable logs only) closes nothing itself and opens the same store again. */
export interface RunLogHarness {
  log: RunLog;
  reopen?: () => RunLog;
  cleanup(): void;
}

/** The event without what the log adds (seq, at). */
function payload(e: StoredRunEvent): RunEvent {
  const { seq: _seq, at: _at, ...rest } = e;
  return rest as RunEvent;
}

/** A few events of one turn, with nested data and text in two scripts. The log stores them as given. */
function turnEvents(turn: string): RunEvent[] {
  return [
    { type: 'turn.started', turn, input: { id: turn, source: 'console', channel: 'console', text: '把厨房灯打开', kind: 'queued', level: 0, received_at: 1_796_040_000_000 } },
    { type: 'context.projected', turn, messages: [{ role: 'system', content: 'You are HomeAgent.' }, { role: 'user', content: '把厨房灯打开' }] },
    { type: 'llm.requested', turn, round: 1, appended: [] },
    { type: 'tool.executed', turn, call_id: 'c1', name: 'home_control', arguments: { entity: 'light.kitchen', brightness: 0.5, tags: ['a', 'b'] }, result: 'ok', is_error: false },
    { type: 'output', turn, channel: 'console', kind: 'text', content: '好的 — done.' },
    { type: 'turn.finished', turn, status: 'done', reply: '好的 — done.' },
  ] as RunEvent[];
}

/** Register the run log contract for one implementation. */
export function runLogContract(name: string, factory: () => RunLogHarness): void {
  describe(`RunLog contract: ${name}`, () => {
    function withLog(fn: (h: RunLogHarness) => void): void {
      const h = factory();
      try {
        fn(h);
      } finally {
        h.log.close();
        h.cleanup();
      }
    }

    it('starts empty; an unknown turn has no events', () =>
      withLog(({ log }) => {
        assert.deepEqual(log.tail(10), []);
        assert.deepEqual(log.turn('nope'), []);
      }));

    it('gives a turn its events in order, unchanged, with growing sequence numbers and a time', () =>
      withLog(({ log }) => {
        const before = Date.now();
        const a = turnEvents('turn-a');
        for (const e of a) log.append(e);
        const stored = log.turn('turn-a');
        assert.deepEqual(stored.map(payload), a);
        for (let i = 1; i < stored.length; i++) assert.ok(stored[i]!.seq > stored[i - 1]!.seq, 'seq grows');
        assert.ok(stored[0]!.seq >= 1);
        for (const e of stored) assert.ok(Number.isFinite(e.at) && e.at >= before - 1000 && e.at <= Date.now() + 1000, `at is ms since epoch (${e.at})`);
      }));

    it('keeps turns apart when their events interleave', () =>
      withLog(({ log }) => {
        const a = turnEvents('turn-a');
        const b = turnEvents('turn-b');
        for (let i = 0; i < a.length; i++) {
          log.append(a[i]!);
          log.append(b[i]!);
        }
        assert.deepEqual(log.turn('turn-a').map(payload), a);
        assert.deepEqual(log.turn('turn-b').map(payload), b);
        const all = log.tail(100);
        assert.equal(all.length, a.length * 2);
        assert.deepEqual(all.map((e) => e.turn), a.flatMap(() => ['turn-a', 'turn-b']));
      }));

    it('tail(n) is the last n events, oldest first', () =>
      withLog(({ log }) => {
        const a = turnEvents('turn-a');
        for (const e of a) log.append(e);
        assert.deepEqual(log.tail(2).map(payload), a.slice(-2));
        assert.deepEqual(log.tail(1000).map(payload), a);
        assert.deepEqual(log.tail(0), []);
        assert.deepEqual(log.tail(-1), [], 'a negative limit is no events (SQLite would read LIMIT -1 as no limit)');
      }));

    it('stores a copy: changing the appended object or a returned one does not change the log', () =>
      withLog(({ log }) => {
        const e = { type: 'tool.executed', turn: 't', call_id: 'c', name: 'x', arguments: { q: 'first' }, result: 'r', is_error: false } as RunEvent;
        log.append(e);
        (e as { arguments: Record<string, unknown> }).arguments.q = 'changed';
        const got = log.turn('t')[0] as StoredRunEvent & { arguments: { q: string } };
        assert.equal(got.arguments.q, 'first');
        got.arguments.q = 'changed too';
        assert.equal((log.turn('t')[0] as StoredRunEvent & { arguments: { q: string } }).arguments.q, 'first');
      }));

    it('close() twice is harmless', () =>
      withLog(({ log }) => {
        log.append(turnEvents('t')[0]!);
        log.close();
        log.close();
      }));

    it('prune bounds the log by size: whole turns go, oldest first, in steps; the newest stay', () =>
      withLog(({ log }) => {
        const filler = 'the quick brown fox jumps over the lazy dog '.repeat(40);
        for (let i = 0; i < 300; i++) for (const e of turnEvents(`t${i}`)) log.append(e.type === 'output' ? { ...e, content: `${i} ${filler}` } as RunEvent : e);
        const full = log.usedBytes();
        assert.ok(full > 300 * 1000, `usedBytes counts the events (${full})`);
        const maxBytes = Math.floor(full / 3);
        const first = log.prune({ before: 0, maxBytes, maxTurns: 50 });
        assert.deepEqual([first.turns, first.more], [50, true], 'one call removes at most maxTurns turns and says there is more');
        assert.equal(first.events, 50 * 6, 'whole turns');
        let r = first;
        while (r.more) r = log.prune({ before: 0, maxBytes, maxTurns: 50 });
        assert.ok(log.usedBytes() <= maxBytes, `within the bound (${log.usedBytes()} <= ${maxBytes})`);
        assert.deepEqual(log.turn('t0'), [], 'the oldest turn is gone');
        assert.equal(log.turn('t299').length, 6, 'the newest turn is whole');
        const left = new Set(log.tail(100000).map((e) => e.turn));
        for (const t of left) assert.equal(log.turn(t).length, 6, `turn ${t} is whole or gone`);
        assert.deepEqual(log.prune({ before: 0, maxBytes, maxTurns: 50 }), { turns: 0, events: 0, more: false }, 'nothing more to do within the bound');
        assert.deepEqual(log.prune({ before: 0, maxBytes: 0 }), { turns: 0, events: 0, more: false }, 'no limits: nothing removed');
      }));

    it('prune by age keeps the compaction summary in force (and what started after it), drops older summaries', () =>
      withLog(({ log }) => {
        const sections = { facts: 'x' } as unknown;
        log.append({ type: 'compaction.started', turn: 'c0', compaction: 'k0', covered: [], previous: '' } as unknown as RunEvent);
        log.append({ type: 'compaction.finished', turn: 'c0', compaction: 'k0', status: 'summarised', sections, covered: [], through_time: 1 } as unknown as RunEvent);
        for (const e of turnEvents('a')) log.append(e);
        log.append({ type: 'compaction.started', turn: 'c1', compaction: 'k1', covered: [], previous: '' } as unknown as RunEvent);
        log.append({ type: 'compaction.finished', turn: 'c1', compaction: 'k1', status: 'summarised', sections, covered: [], through_time: 2 } as unknown as RunEvent);
        log.append({ type: 'compaction.started', turn: 'c2', compaction: 'k2', covered: [], previous: '' } as unknown as RunEvent);
        for (const e of turnEvents('b')) log.append(e);
        const r = log.prune({ before: Date.now() + 60_000, maxBytes: 0 });
        assert.equal(r.more, false);
        const left = log.tail(1000).map((e) => `${e.type}:${(e as { compaction?: string }).compaction ?? e.turn}`);
        assert.deepEqual(left, ['compaction.started:k1', 'compaction.finished:k1', 'compaction.started:k2']);
      }));

    it('a durable log keeps every event across a reopen and keeps numbering after them', (t) => {
      const h = factory();
      if (!h.reopen) {
        h.log.close();
        h.cleanup();
        t.skip('not durable');
        return;
      }
      let again: RunLog | undefined;
      try {
        const a = turnEvents('turn-a');
        for (const e of a) h.log.append(e);
        const last = h.log.tail(1)[0]!.seq;
        h.log.close();
        again = h.reopen();
        assert.deepEqual(again.turn('turn-a').map(payload), a);
        again.append(turnEvents('turn-b')[0]!);
        assert.ok(again.turn('turn-b')[0]!.seq > last);
      } finally {
        again?.close();
        h.cleanup();
      }
    });
  });
}
