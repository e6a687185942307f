/**
 * The memory loops' long ticks give the event loop back between items
 * (src/kernel/time-slice.ts): the rules tick distilling a thousand queued
 * utterances held the service's event loop for 400 ms in one stretch (found
 * by the stop bench with a CPU profile), and a stop button pressed meanwhile
 * waited the whole stretch. Budget 0 here: a yield between every two items.
 * What changes meanwhile is respected: an utterance or a document forgotten
 * while the tick is part way is not distilled afterwards, close() part way
 * ends the tick without touching the closed database, and a second tick of
 * the same loop is the running one (no item taken twice).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { MemorySystem } from '../../src/memory/index.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { eid, makeMemory, tempDir } from './helpers.js';

const DAY = 86_400_000;
const CITIES = ['Lisbon', 'Porto', 'Madrid', 'Seville', 'Valencia', 'Bilbao', 'Granada', 'Toledo', 'Cordoba', 'Malaga'];

/** `n` user utterances queued for the rule distiller, each telling where someone lives. */
function tell(mem: MemorySystem, clock: FakeClock, n: number): string[] {
  const people: string[] = [];
  for (let i = 0; i < n; i++) {
    const who = `Person${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}`;
    people.push(who);
    mem.append({ id: eid(), time: clock.now(), kind: 'user', source: 'voice', input: `I live in ${CITIES[i % CITIES.length]}.`, response: '', speaker: who });
    clock.advance(1000);
  }
  return people;
}

const queued = (mem: MemorySystem): number => Number(mem.db.prepare('SELECT count(*) FROM rule_queue').pluck().get());
/** What the graph holds of `who` (the places they live in). */
const factsOf = (mem: MemorySystem, who: string): string[] => mem.graph.relationsOf(mem.graph.resolve(who)?.id ?? -1).map((x) => x.target_name);
/** One turn of the event loop: resolves in the check phase after the current one. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('memory loop ticks are sliced', () => {
  let cleanup: (() => void) | undefined;
  let mem: MemorySystem | undefined;
  afterEach(() => {
    mem?.close();
    cleanup?.();
  });
  const open = (): { mem: MemorySystem; clock: FakeClock } => {
    const t = tempDir();
    cleanup = t.cleanup;
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    mem = makeMemory({ dir: t.dir, clock, sliceBudgetMs: 0 });
    return { mem, clock };
  };

  it('the rules tick lets other work run between utterances and still distils them all', async () => {
    const { mem, clock } = open();
    tell(mem, clock, 40);
    assert.equal(queued(mem), 40);
    let turns = 0;
    let ticking = true;
    const tick = mem.runLoopOnce('rules').finally(() => (ticking = false));
    while (ticking) {
      await turn();
      turns++;
    }
    const r = await tick;
    assert.equal(r.utterances, 40);
    assert.ok(turns >= 39, `the event loop turned ${turns} times during the tick (one per utterance)`);
    assert.equal(queued(mem), 0);
    assert.deepEqual(factsOf(mem, 'PersonAA'), ['Lisbon'], 'the first utterance was distilled');
    assert.deepEqual(factsOf(mem, 'PersonNB'), ['Malaga'], 'the last utterance was distilled');
  });

  it('an utterance forgotten while the rules tick is part way is not distilled', async () => {
    const { mem, clock } = open();
    const people = tell(mem, clock, 30);
    const tick = mem.runLoopOnce('rules');
    for (let i = 0; i < 5; i++) await turn();
    const last = people.at(-1)!;
    assert.equal(Number(mem.db.prepare('SELECT count(*) FROM rule_queue WHERE text LIKE ?').pluck().get(`I live in ${CITIES[(people.length - 1) % CITIES.length]}.`)), 3, 'still queued (three people said it)');
    mem.forget({ about: `I live in ${CITIES[(people.length - 1) % CITIES.length]}` }, { speaker: last });
    assert.equal(Number(mem.db.prepare('SELECT count(*) FROM rule_queue WHERE text LIKE ?').pluck().get(`I live in ${CITIES[(people.length - 1) % CITIES.length]}.`)), 2, 'the forgetting took theirs off the queue, not the others\'');
    const r = await tick;
    assert.equal(r.utterances, 29);
    assert.deepEqual(factsOf(mem, people.at(-11)!), [CITIES[(people.length - 1) % CITIES.length]], 'another person who said the same still has it');
    assert.deepEqual(factsOf(mem, last), [], `${last}'s fact did not come back from the tick's copy of the queue`);
    assert.deepEqual(factsOf(mem, people[0]!), ['Lisbon']);
  });

  it('close() part way ends the tick without touching the closed database', async () => {
    const { mem, clock } = open();
    tell(mem, clock, 30);
    const tick = mem.runLoopOnce('rules');
    for (let i = 0; i < 3; i++) await turn();
    mem.close();
    const r = await tick;
    assert.equal(r.closed, 1);
    assert.ok(r.utterances! < 30 && r.error === undefined, JSON.stringify(r));
  });

  it('a second tick of a loop while one runs is that same tick', async () => {
    const { mem, clock } = open();
    tell(mem, clock, 20);
    const a = mem.runLoopOnce('rules');
    const b = mem.runLoopOnce('rules');
    assert.equal(a, b);
    assert.equal((await a).utterances, 20);
    const c = mem.runLoopOnce('rules');
    assert.notEqual(c, a);
    assert.equal((await c).utterances, 0);
  });

  it('the archive tick skips a document forgotten while it is part way', async () => {
    const { mem, clock } = open();
    for (let i = 0; i < 40; i++) {
      mem.append({ id: eid(), time: clock.now(), kind: 'user', source: 'voice', input: `Guest${i} stays in room ${i + 100} of the Hotel${i}.`, response: '', speaker: `Guest${i}` });
      mem.prune(`Guest${i}`);
      clock.advance(60_000);
    }
    await mem.runLoopOnce('rules');
    clock.advance(30 * DAY);
    const cold = Number(mem.db.prepare('SELECT count(*) FROM docs WHERE distilled = 0').pluck().get());
    assert.ok(cold >= 10, `${cold} documents to distil`);
    const tick = mem.runLoopOnce('archive');
    for (let i = 0; i < 3; i++) await turn();
    const gone = mem.db.prepare("SELECT input FROM docs WHERE distilled = 0 ORDER BY time DESC LIMIT 1").pluck().get() as string;
    const f = mem.forget({ about: gone.replace(/\.$/, '') });
    assert.ok(f.documents >= 1, 'the document was forgotten');
    const r = await tick;
    assert.ok(r.cold! >= 1 && r.cold! < cold, JSON.stringify(r));
    assert.equal(Number(mem.db.prepare('SELECT count(*) FROM docs WHERE distilled = 0').pluck().get()), 0);
    assert.equal(Number(mem.db.prepare('SELECT count(*) FROM docs WHERE input = ?').pluck().get(gone)), 0);
  });
});
