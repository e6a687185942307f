/**
 * The Memory page's documents and knowledge lists (issue 16 page 3) and what
 * a session may read of other people's turns (issue 18), over real HTTPS
 * against the running service: documents newest first and paged, another
 * person's sensitive document left out as recall leaves it out, a document
 * forgotten through memory_forget; the knowledge base listed and read; and
 * GET /turns/{id}, /turns/{id}/context and /memory/recalled masking another
 * person's private turn as the prompt history masks it (the owner, and
 * only the owner, reads it whole; an unnamed session reads as the
 * unidentified speaker).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readNdjson, startHouseholdBox, type WebBox } from './helpers.js';

let box: WebBox;
let alice: string;
let bob: string;
let household: string;
before(async () => {
  ({ box, alice, bob, household } = await startHouseholdBox());
});
after(async () => box.close());

type Doc = { id: number; time: number; kind: string; speaker?: string; title?: string; input: string; response: string };
type Page = { documents: Doc[]; next?: string; total: number };
const page = async (bearer: string, q = ''): Promise<Page> => {
  const r = await box.req(`/api/v1/memory/documents${q}`, { bearer });
  assert.equal(r.status, 200, r.text);
  return r.json as Page;
};
/** Every document `bearer` may see, page by page (`limit` per page). */
async function allPages(bearer: string, limit: number): Promise<Doc[]> {
  const out: Doc[] = [];
  let next: string | undefined;
  for (let i = 0; i < 50; i++) {
    const p = await page(bearer, `?limit=${limit}${next ? `&before=${next}` : ''}`);
    assert.ok(p.documents.length <= limit);
    out.push(...p.documents);
    next = p.next;
    if (!next) return out;
  }
  throw new Error('more than 50 pages');
}

test("documents: newest first, paged; another person's sensitive one left out; bad input is a 400 naming the field", async () => {
  const docs = box.app.memory!.system.docs;
  const t0 = Date.now() - 3_600_000;
  for (let i = 0; i < 23; i++) docs.add({ event_id: `chat-${i}:user`, time: t0 + i * 1000, kind: 'user', source: 'voice', input: `we talked about the weather, day ${i}`, response: '' }, t0);
  const bobs = docs.add({ event_id: 'bob-private:user', time: t0 + 30_000, kind: 'user', source: 'voice', speaker: 'Bob', input: 'my blood pressure medication is lisinopril', response: '' }, t0);
  const alices = docs.add({ event_id: 'alice-garden:user', time: t0 + 31_000, kind: 'user', source: 'voice', speaker: 'Alice', input: 'I planted tomatoes in the garden', response: '' }, t0);
  const note = box.app.memory!.system.commitDocument('bins', 'Recycling goes out on Mondays.');

  const first = await page(alice, '?limit=3');
  assert.deepEqual(first.documents.slice(0, 2).map((d) => d.id), [note, alices]);
  assert.equal(first.documents[0]!.kind, 'note');
  assert.equal(first.documents[0]!.title, 'bins');
  assert.equal(first.documents[1]!.speaker, 'Alice');
  // Bob's sensitive document is not in Alice's pages (it would have been the third), nor the household's; it is in Bob's.
  assert.notEqual(first.documents[2]!.id, bobs);
  assert.match(first.documents[2]!.input, /day 22/);
  assert.ok(first.next);
  assert.equal(first.total, 26);
  const alicesAll = await allPages(alice, 4);
  assert.equal(alicesAll.length, 25);
  assert.equal(new Set(alicesAll.map((d) => d.id)).size, 25, 'no document twice across pages');
  assert.deepEqual(alicesAll.map((d) => d.time), [...alicesAll.map((d) => d.time)].sort((a, b) => b - a), 'newest first');
  assert.ok(!alicesAll.some((d) => d.id === bobs));
  assert.ok(!(await allPages(household, 100)).some((d) => d.id === bobs));
  const bobsAll = await allPages(bob, 7);
  assert.equal(bobsAll.length, 26);
  assert.equal(bobsAll.find((d) => d.id === bobs)?.input, 'my blood pressure medication is lisinopril');

  for (const [q, field] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?limit=two', 'limit'], ['?before=yesterday', 'before'], ['?before=12', 'before']] as const) {
    const r = await box.req(`/api/v1/memory/documents${q}`, { bearer: alice });
    assert.equal(r.status, 400, q);
    assert.equal(r.json.code, 'BAD_ARGUMENT');
    assert.match(r.json.error, new RegExp(`"${field}"`), q);
  }
  assert.equal((await box.req('/api/v1/memory/documents')).status, 401);
});

test('a document forgotten from the list goes through memory_forget by its words; one the session may not see is a 404', async () => {
  const docs = box.app.memory!.system.docs;
  const visible = async (bearer: string) => (await allPages(bearer, 100)).map((d) => d.input);
  const garden = (await allPages(alice, 100)).find((d) => /tomatoes/.test(d.input))!;
  const bobs = (await allPages(bob, 100)).find((d) => /lisinopril/.test(d.input))!;
  // Alice may not see Bob's sensitive document: not found (not "forbidden": whether it exists is not hers to know).
  const hidden = await box.req('/api/v1/memory/forget', { method: 'POST', body: { document: bobs.id }, bearer: alice });
  assert.equal(hidden.status, 404, hidden.text);
  assert.match(hidden.json.error, new RegExp(`no document ${bobs.id} in the memory`));
  assert.ok(docs.get(bobs.id));
  const gone = await box.req('/api/v1/memory/forget', { method: 'POST', body: { document: garden.id }, bearer: alice });
  assert.equal(gone.status, 200, gone.text);
  assert.equal(gone.json.tool, 'memory_forget');
  assert.equal(gone.json.document, garden.id);
  assert.equal(gone.json.about, 'I planted tomatoes in the garden');
  assert.match(gone.json.result, /Forgotten for good/);
  assert.equal(docs.get(garden.id), undefined);
  assert.ok(!(await visible(alice)).some((t) => /tomatoes/.test(t)));
  // Bob forgets his own.
  const own = await box.req('/api/v1/memory/forget', { method: 'POST', body: { document: bobs.id }, bearer: bob });
  assert.equal(own.status, 200, own.text);
  assert.equal(docs.get(bobs.id), undefined);
  const bad: Array<[unknown, RegExp, number?]> = [
    [{ document: 'one' }, /"document" must be a document id/],
    [{ document: 0 }, /"document" must be a document id/],
    [{ document: 1, about: 'weather' }, /one of them/],
    [{ document: 999999 }, /no document 999999/, 404],
  ];
  for (const [body, message, status] of bad) {
    const r = await box.req('/api/v1/memory/forget', { method: 'POST', body, bearer: alice });
    assert.equal(r.status, status ?? 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.json.error, message, JSON.stringify(body));
  }
});

test('the knowledge base: listed with where each document comes from, and read whole; an unknown name is a 404', async () => {
  box.app.memory!.system.knowledge.create('bins', '# Bins\n\nRecycling goes out on Mondays; the green bin on Thursdays.');
  const list = await box.req('/api/v1/knowledge', { bearer: alice });
  assert.equal(list.status, 200, list.text);
  const entries = list.json as Array<{ name: string; source: string; bytes: number }>;
  assert.deepEqual(entries.map((e) => e.name), [...entries.map((e) => e.name)].sort());
  assert.equal(entries.find((e) => e.name === 'bins')?.source, 'user');
  assert.equal(entries.find((e) => e.name === 'homeagent-guide')?.source, 'shipped');
  assert.ok(entries.every((e) => e.bytes > 0));
  const one = await box.req('/api/v1/knowledge/bins', { bearer: alice });
  assert.equal(one.status, 200, one.text);
  assert.match(one.json.content, /green bin on Thursdays/);
  assert.equal(one.json.source, 'user');
  const none = await box.req('/api/v1/knowledge/no%20such%20thing', { bearer: alice });
  assert.equal(none.status, 404);
  assert.match(none.json.error, /no knowledge document "no such thing"/);
  assert.equal((await box.req('/api/v1/knowledge')).status, 401);
});

/** Ask as `bearer`'s session; the turn's id. */
async function ask(bearer: string, text: string): Promise<string> {
  const lines = await readNdjson(await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text }, bearer }));
  return lines[0].input_id as string;
}

test("another person's private turn is masked in /turns/{id}, its context and /memory/recalled; the owner reads it whole", async () => {
  box.app.memory!.system.graph.commit([{ subject: 'Bob', subject_type: 'person', relation: 'is treated for', object: 'a rare illness', sensitive: true, owner: 'Bob' }], Date.now());
  box.llm.enqueue({ tool_calls: [{ name: 'memory_recall', arguments: { query: 'Bob treatment' } }] }, { content: 'You see Dr. Lee on Fridays.' });
  const turn = await ask(bob, 'what is Bob treated for, and when is my appointment?');
  const read = async (bearer: string) => ({
    events: JSON.stringify((await box.req(`/api/v1/turns/${turn}`, { bearer })).json),
    context: (await box.req(`/api/v1/turns/${turn}/context?round=1`, { bearer })).json as { messages: Array<{ role: string; content: string }> },
    recalled: (await box.req(`/api/v1/memory/recalled?turn=${turn}`, { bearer })).json as { text: string; sections: Array<{ title: string; items: string[] }>; tools: Array<{ result: string; arguments: object }> },
  });
  // Bob: everything, as the model saw it.
  const own = await read(bob);
  assert.match(own.events, /what is Bob treated for/);
  assert.match(own.events, /Dr\. Lee/);
  assert.equal(own.recalled.text, 'what is Bob treated for, and when is my appointment?');
  assert.ok(own.recalled.sections.some((s) => s.items.some((i) => /rare illness/.test(i))), JSON.stringify(own.recalled));
  assert.ok(own.context.messages.some((m) => /rare illness/.test(m.content)));
  // Alice, and the unnamed household session: the turn's words are placeholders (its recall touched Bob's illness).
  for (const viewer of [alice, household]) {
    const other = await read(viewer);
    for (const secret of [/rare illness/, /treated for/, /Dr\. Lee/, /appointment/]) {
      assert.doesNotMatch(other.events, secret);
      assert.doesNotMatch(JSON.stringify(other.context), secret);
      assert.doesNotMatch(JSON.stringify(other.recalled), secret);
    }
    assert.match(other.events, /\[Bob said something private\]/);
    assert.equal(other.recalled.text, '[Bob said something private]');
    assert.deepEqual(other.recalled.sections, []);
    assert.deepEqual(other.recalled.tools.map((t) => [t.result, t.arguments]), [['[private]', {}]]);
    // The shape stays: the turn context's first line (time, channel, speaker) and the roles.
    assert.deepEqual(other.context.messages.map((m) => m.role), own.context.messages.map((m) => m.role));
    assert.ok(other.context.messages.some((m) => /^\[Turn context: .*speaker: Bob\]$/.test(m.content)), JSON.stringify(other.context.messages));
    // The last turn (no id): the same, masked.
    assert.equal(((await box.req('/api/v1/memory/recalled', { bearer: viewer })).json as { text: string }).text, '[Bob said something private]');
  }
});

test("a turn touching nothing sensitive is read whole by anyone; the unidentified speaker's private turn by unnamed sessions only", async () => {
  box.llm.enqueue({ content: 'Why did the cat sit on the computer? To keep an eye on the mouse.' });
  const plain = await ask(bob, 'tell me a joke about cats');
  const plainAlice = JSON.stringify((await box.req(`/api/v1/turns/${plain}`, { bearer: alice })).json);
  assert.match(plainAlice, /tell me a joke about cats/);
  assert.match(plainAlice, /keep an eye on the mouse/);
  box.llm.enqueue({ content: 'Noted: the guest wifi password is hunter22.' });
  const said = await ask(household, 'the guest wifi password is hunter22');
  const byHousehold = JSON.stringify((await box.req(`/api/v1/turns/${said}`, { bearer: await box.scriptLogin() })).json);
  assert.match(byHousehold, /hunter22/);
  for (const named of [alice, bob]) {
    const masked = JSON.stringify((await box.req(`/api/v1/turns/${said}`, { bearer: named })).json);
    assert.doesNotMatch(masked, /hunter22/);
    assert.match(masked, /\[someone in the household said something private\]/);
  }
  // A later turn of Bob's: its history holds his earlier private turn, which Alice reads masked (as a whole turn, not only its sensitive words).
  box.llm.enqueue({ content: 'Hello Bob.' });
  const later = await ask(bob, 'hello');
  const laterBob = JSON.stringify((await box.req(`/api/v1/turns/${later}/context?round=1`, { bearer: bob })).json);
  assert.doesNotMatch(laterBob, /hunter22/, "the prompt history already hid the household's private words from Bob");
  assert.match(laterBob, /Dr\. Lee/, 'his earlier private turn is in the history Bob reads');
  const laterAlice = JSON.stringify((await box.req(`/api/v1/turns/${later}/context?round=1`, { bearer: alice })).json);
  assert.match(laterAlice, /hello/);
  assert.doesNotMatch(laterAlice, /lisinopril|rare illness|Dr\. Lee/);
});
