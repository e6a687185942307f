/**
 * The live Activity stream as each session may read it (issue 18, the rule
 * of GET /turns/{id}: src/plugins/webui/turn-privacy.ts), over real HTTPS
 * against the running service: Alice's and Bob's pages (and an unnamed one)
 * watch while Bob says something sensitive; only Bob's stream holds its
 * words, live (deltas included) and in the backlog a page gets when it
 * opens later. A turn found private part way (a plain question, a sensitive
 * answer) sends the other pages `turn.private` and nothing of it after; the
 * backlog replays it masked as a whole.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { readNdjson, startHouseholdBox, type WebBox } from './helpers.js';

let box: WebBox;
let alice: string;
let bob: string;
let household: string;
before(async () => {
  ({ box, alice, bob, household } = await startHouseholdBox());
});
after(async () => box.close());

type Ev = { type: string; payload: Record<string, unknown> };

/** An open event stream: its raw text and its events as they arrive; `until` resolves when one matches. */
class Watch {
  text = '';
  events: Ev[] = [];
  private buf = '';
  private waiters: Array<{ match: (e: Ev) => boolean; resolve: () => void }> = [];
  constructor(readonly res: http.IncomingMessage) {
    res.on('data', (c: Buffer) => {
      this.buf += c.toString('utf8');
      let i;
      while ((i = this.buf.indexOf('\n\n')) >= 0) {
        const frame = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        this.text += `${frame}\n\n`;
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const ev = JSON.parse(data.slice(6)) as Ev;
        this.events.push(ev);
        this.waiters = this.waiters.filter((w) => !(w.match(ev) && (w.resolve(), true)));
      }
    });
  }
  static async open(bearer: string, q = 'backlog=0&deltas=1'): Promise<Watch> {
    const res = await box.stream(`/api/v1/events?${q}`, { bearer });
    assert.equal(res.statusCode, 200);
    return new Watch(res);
  }
  /** Resolves once an event matching `match` arrived (already or later). */
  until(match: (e: Ev) => boolean): Promise<void> {
    if (this.events.some(match)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
  close(): void {
    this.res.destroy();
  }
}

const finished = (turn: string) => (e: Ev) => e.type === 'turn.finished' && e.payload.turn === turn;

/** Ask as `bearer`'s session; the turn's id once it ended. */
async function ask(bearer: string, text: string): Promise<string> {
  const lines = await readNdjson(await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text }, bearer }));
  return lines[0].input_id as string;
}

test("Bob's sensitive turn, live: Bob's page reads it whole, Alice's and the unnamed page none of its words (no deltas); the backlog the same", async () => {
  const [a, b, h] = [await Watch.open(alice), await Watch.open(bob), await Watch.open(household)];
  box.llm.enqueue({ content: 'You see Dr. Lee on Fridays at nine.', tokensPerSecond: 200 });
  const turn = await ask(bob, 'my blood pressure pills ran out, when is my appointment?');
  await Promise.all([a, b, h].map((w) => w.until(finished(turn))));
  const words = [/blood pressure/, /pills/, /appointment/, /Dr\. Lee/, /Fridays/, /nine/];
  for (const w of words) assert.match(b.text, w, "Bob's own stream");
  assert.ok(b.events.some((e) => e.type === 'llm.delta' && e.payload.turn === turn), 'Bob gets the deltas');
  for (const w of [a, h]) {
    for (const word of words) assert.doesNotMatch(w.text, word);
    assert.ok(!w.events.some((e) => e.type === 'llm.delta' && e.payload.turn === turn), 'no deltas of it');
    const started = w.events.find((e) => e.type === 'turn.started' && e.payload.turn === turn)!;
    assert.equal((started.payload.input as { text: string }).text, '[Bob said something private]');
    assert.equal((started.payload.input as { user: string }).user, 'Bob', 'who and how stay');
    const done = w.events.find(finished(turn))!;
    assert.equal(done.payload.status, 'done');
    assert.equal(done.payload.reply, '[private]');
  }
  // A page opened later gets the backlog as its person may read it.
  const [a2, b2] = [await Watch.open(alice, 'deltas=1'), await Watch.open(bob, 'deltas=1')];
  await Promise.all([a2, b2].map((w) => w.until(finished(turn))));
  for (const word of words) {
    assert.doesNotMatch(a2.text, word);
    assert.match(b2.text, word);
  }
  for (const w of [a, b, h, a2, b2]) w.close();
});

test("a turn found private part way: the other pages get turn.private and nothing of its words after; its backlog is masked whole; a plain turn is everyone's", async () => {
  const [a, b] = [await Watch.open(alice), await Watch.open(bob)];
  box.llm.enqueue({ content: 'The pharmacy called: your prescription is ready.' });
  const turn = await ask(bob, 'did anyone call for me today?');
  await Promise.all([a, b].map((w) => w.until(finished(turn))));
  assert.match(a.text, /did anyone call for me today/, 'the plain question went out before the answer');
  const i = a.events.findIndex((e) => e.type === 'turn.private' && e.payload.turn === turn);
  assert.ok(i >= 0, `turn.private on Alice's stream: ${a.events.map((e) => e.type).join(',')}`);
  assert.equal(a.events[i]!.payload.text, '[Bob said something private]');
  // The sensitive word itself never reached Alice (the delta that brought it is not sent); what went out before it, the page masks.
  assert.doesNotMatch(JSON.stringify(a.events.filter((e) => e.payload.turn === turn)), /prescription/);
  assert.doesNotMatch(JSON.stringify(a.events.slice(i + 1).filter((e) => e.payload.turn === turn)), /pharmacy|called|did anyone/);
  assert.ok(!b.events.some((e) => e.type === 'turn.private'), 'not on the owner’s');
  assert.match(b.text, /your prescription is ready/);
  const later = await Watch.open(alice, '');
  await later.until(finished(turn));
  const replay = JSON.stringify(later.events.filter((e) => e.payload.turn === turn || e.payload.id === turn));
  assert.doesNotMatch(replay, /did anyone call|prescription|pharmacy/);
  // A turn with nothing sensitive reads the same on every page.
  box.llm.enqueue({ content: 'Why did the cat sit on the computer? To keep an eye on the mouse.' });
  const plain = await ask(bob, 'tell me a joke about cats');
  await a.until(finished(plain));
  assert.match(a.text, /tell me a joke about cats/);
  assert.match(a.text, /keep an eye on the mouse/);
  for (const w of [a, b, later]) w.close();
});
