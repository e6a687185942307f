/**
 * The Memory and Devices pages' API (issue 16 pages 3 and 4) over real HTTPS
 * against the running service: the memory graph (the most mentioned
 * entities, one entity's neighbourhood), what was recalled for the last
 * turn (from the run log), edits and forgetting through the model's memory
 * tools (forgotten everywhere: graph and recall), each refused with a 4xx
 * naming the field on bad input and refused from another origin; and the
 * devices event stream, which carries a device's state as it arrives on the
 * box's MQTT broker.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import mqtt from 'mqtt';
import { startWebBox, type WebBox } from './helpers.js';
import { readNdjson } from './helpers.js';

let box: WebBox;
let token: string;
before(async () => {
  box = await startWebBox();
  token = await box.scriptLogin();
  const now = Date.now();
  box.app.memory!.system.graph.commit(
    [
      { subject: 'Anna', subject_type: 'person', relation: 'likes', object: 'green tea', object_type: 'thing' },
      { subject: 'Anna', subject_type: 'person', relation: 'lives in', object: 'Lisbon', object_type: 'place' },
      { subject: 'Tom', subject_type: 'person', relation: 'owns', object: 'old red car', object_type: 'thing' },
      { subject: 'Tom', subject_type: 'person', relation: 'is brother of', object: 'Anna' },
    ],
    now,
  );
});
after(async () => box.close());

const post = (p: string, body: unknown) => box.req(`/api/v1${p}`, { method: 'POST', body, bearer: token });
type Graph = { entities: Array<{ id: number; name: string; type: string }>; relations: Array<{ id: number; source: number; target: number; relation: string }>; focus?: number; total: number };
const names = (g: Graph) => g.entities.map((e) => e.name).sort();

test('the memory graph: the most mentioned entities with their relations, and one entity explored', async () => {
  const all = await box.req('/api/v1/memory/graph', { bearer: token });
  assert.equal(all.status, 200, all.text);
  const g = all.json as Graph;
  assert.deepEqual(names(g), ['Anna', 'Lisbon', 'Tom', 'green tea', 'old red car']);
  assert.equal(g.total, 5);
  const byId = new Map(g.entities.map((e) => [e.id, e.name]));
  assert.ok(g.relations.some((r) => byId.get(r.source) === 'Tom' && r.relation === 'is brother of' && byId.get(r.target) === 'Anna'));
  // Explore Lisbon: its one relation and its neighbour.
  const lisbon = (await box.req('/api/v1/memory/graph?entity=Lisbon', { bearer: token })).json as Graph;
  assert.deepEqual(names(lisbon), ['Anna', 'Lisbon']);
  assert.equal(lisbon.entities.find((e) => e.id === lisbon.focus)?.name, 'Lisbon');
  assert.deepEqual(lisbon.relations.map((r) => r.relation), ['lives in']);
  const one = (await box.req('/api/v1/memory/graph?limit=1', { bearer: token })).json as Graph;
  assert.equal(one.entities.length, 1);
  // Bad input: a 4xx naming what is wrong.
  const unknown = await box.req('/api/v1/memory/graph?entity=Nobody%20Here', { bearer: token });
  assert.equal(unknown.status, 404);
  assert.match(unknown.json.error, /no entity "Nobody Here"/);
  for (const q of ['limit=0', 'limit=abc', 'limit=1000']) {
    const r = await box.req(`/api/v1/memory/graph?${q}`, { bearer: token });
    assert.equal(r.status, 400, q);
    assert.match(r.json.error, /"limit"/);
  }
  assert.match((await box.req('/api/v1/memory/graph?entity=', { bearer: token })).json.error, /"entity"/);
  assert.equal((await box.req('/api/v1/memory/graph')).status, 401);
});

test("another person's sensitive facts, and what is known only through them, are left out of the graph", async () => {
  box.app.memory!.system.graph.commit([{ subject: 'Bob', subject_type: 'person', relation: 'is treated for', object: 'a rare illness', sensitive: true, owner: 'Bob' }], Date.now());
  const alice = await box.scriptLogin('Alice');
  const bob = await box.scriptLogin('Bob');
  const seen = async (bearer: string) => names((await box.req('/api/v1/memory/graph?limit=200', { bearer })).json as Graph);
  assert.ok(!(await seen(alice)).includes('a rare illness'));
  assert.ok((await seen(alice)).includes('Bob'), 'the person is still shown');
  assert.equal(((await box.req('/api/v1/memory/graph?entity=Bob', { bearer: alice })).json as Graph).relations.length, 0);
  assert.equal((await box.req('/api/v1/memory/graph?entity=a%20rare%20illness', { bearer: alice })).status, 404);
  assert.ok((await seen(bob)).includes('a rare illness'));
  assert.deepEqual(((await box.req('/api/v1/memory/graph?entity=a%20rare%20illness', { bearer: bob })).json as Graph).relations.map((r) => r.relation), ['is treated for']);
});

test('edits go through memory_edit: an entity renamed, a relation changed; bad input is a 4xx naming the field', async () => {
  const renamed = await post('/memory/edit', { entity: 'Tom', new_name: 'Thomas' });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.json.tool, 'memory_edit');
  assert.match(renamed.json.result, /Updated entity 「Tom」/);
  const g = (await box.req('/api/v1/memory/graph', { bearer: token })).json as Graph;
  assert.ok(names(g).includes('Thomas') && !names(g).includes('Tom'));
  // The old name stays an alias, as memory_edit leaves it.
  assert.equal(((await box.req('/api/v1/memory/graph?entity=Tom', { bearer: token })).json as Graph).entities.find((e) => e.name === 'Thomas') !== undefined, true);
  const likes = g.relations.find((r) => r.relation === 'likes')!;
  const changed = await post('/memory/edit', { relation_id: likes.id, relation_type: 'loves' });
  assert.equal(changed.status, 200, changed.text);
  assert.match(changed.json.result, /Anna loves green tea/);
  const bad: Array<[unknown, RegExp, number?]> = [
    [{}, /"entity".*"relation_id"/],
    [{ entity: '', new_name: 'x' }, /"entity" must be a non-empty string/],
    [{ entity: 'Anna' }, /"new_name" and\/or "type"/],
    [{ entity: 'Anna', new_name: 7 }, /"new_name" must be a non-empty string/],
    [{ entity: 'Anna', new_name: 'x'.repeat(201) }, /"new_name" is 201 characters/],
    [{ relation_id: 'one', relation_type: 'x' }, /"relation_id" must be a whole number/],
    [{ relation_id: likes.id }, /"relation_type" and\/or "target"/],
    [{ entity: 'Anna', relation_id: 1 }, /one of them/],
    [{ entity: 'Anna', colour: 'blue' }, /unknown field "colour"/],
    [{ entity: 'Nobody', new_name: 'Somebody' }, /no entity "Nobody"/, 404],
    [{ relation_id: 999999, relation_type: 'x' }, /no relation with id 999999/, 404],
  ];
  for (const [body, message, status] of bad) {
    const r = await post('/memory/edit', body);
    assert.equal(r.status, status ?? 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.json.error, message, JSON.stringify(body));
  }
  // Not JSON at all.
  const raw = await box.req('/api/v1/memory/edit', { method: 'POST', raw: '{nope', headers: { 'content-type': 'application/json' }, bearer: token });
  assert.equal(raw.status, 400);
});

test('forgetting goes through memory_delete_entity / memory_forget: gone from the graph and from recall; refused from another origin', async () => {
  const before = (await box.req('/api/v1/memory/recall?q=old%20red%20car', { bearer: token })).json as Array<{ text: string }>;
  assert.ok(before.some((m) => /old red car/.test(m.text)), JSON.stringify(before));
  // A browser's cookie without the page's origin changes nothing.
  const cookie = await box.browserLogin();
  for (const origin of [undefined, 'https://evil.example']) {
    const r = await box.req('/api/v1/memory/forget', { method: 'POST', body: { entity: 'old red car' }, cookie, ...(origin ? { origin } : {}) });
    assert.equal(r.status, 403, r.text);
  }
  assert.equal((await box.req('/api/v1/memory/graph?entity=old%20red%20car', { bearer: token })).status, 200);
  const gone = await box.req('/api/v1/memory/forget', { method: 'POST', body: { entity: 'old red car' }, cookie, origin: true });
  assert.equal(gone.status, 200, gone.text);
  assert.equal(gone.json.tool, 'memory_delete_entity');
  assert.match(gone.json.result, /Forgot 「old red car」: 1 fact/);
  assert.equal((await box.req('/api/v1/memory/graph?entity=old%20red%20car', { bearer: token })).status, 404);
  assert.ok(!names((await box.req('/api/v1/memory/graph', { bearer: token })).json as Graph).includes('old red car'));
  const after = (await box.req('/api/v1/memory/recall?q=old%20red%20car', { bearer: token })).json as Array<{ text: string }>;
  assert.ok(!after.some((m) => /old red car/.test(m.text)), JSON.stringify(after));
  // By words (memory_forget).
  const words = await post('/memory/forget', { about: 'Lisbon' });
  assert.equal(words.status, 200, words.text);
  assert.equal(words.json.tool, 'memory_forget');
  assert.ok(!names((await box.req('/api/v1/memory/graph', { bearer: token })).json as Graph).includes('Lisbon'));
  const bad: Array<[unknown, RegExp, number?]> = [
    [{}, /"entity".*"about"/],
    [{ entity: 'Anna', about: 'tea' }, /one of them/],
    [{ entity: '' }, /"entity" must be a non-empty string/],
    [{ about: 5 }, /"about" must be a non-empty string/],
    [{ about: 'x'.repeat(501) }, /"about" is 501 characters/],
    [{ entity: 'Nobody' }, /no entity "Nobody"/, 404],
  ];
  for (const [body, message, status] of bad) {
    const r = await post('/memory/forget', body);
    assert.equal(r.status, status ?? 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.json.error, message, JSON.stringify(body));
  }
});

test('what was recalled for the last turn: the memory block of its context and the memory tools it called', async () => {
  const none = await box.req('/api/v1/memory/recalled?turn=no-such-turn', { bearer: token });
  assert.equal(none.status, 404);
  assert.match(none.json.error, /no turn "no-such-turn"/);
  assert.match((await box.req('/api/v1/memory/recalled?turn=', { bearer: token })).json.error, /"turn"/);
  box.llm.enqueue({ tool_calls: [{ name: 'memory_recall', arguments: { query: 'Anna tea' } }] }, { content: 'Anna loves green tea.' });
  const lines = await readNdjson(await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'what does Anna drink?' }, bearer: token }));
  const turn = lines[0].input_id as string;
  const r = await box.req('/api/v1/memory/recalled', { bearer: token });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.turn, turn);
  assert.equal(r.json.text, 'what does Anna drink?');
  const facts = (r.json.sections as Array<{ title: string; items: string[] }>).find((s) => s.title === '[Known facts]');
  assert.ok(facts?.items.some((i) => /Anna loves green tea/.test(i)), JSON.stringify(r.json.sections));
  assert.equal(r.json.tools[0].name, 'memory_recall');
  assert.match(r.json.tools[0].result, /green tea/);
  // The same by its id.
  assert.deepEqual((await box.req(`/api/v1/memory/recalled?turn=${turn}`, { bearer: token })).json, r.json);
});

test('the devices stream carries a device state as it arrives on MQTT; an unknown stream is a 400 naming it', async () => {
  const bad = await box.req('/api/v1/events?stream=weather', { bearer: token });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error, /"stream" must be one of activity, devices/);
  const res = await box.stream('/api/v1/events?stream=devices', { bearer: token });
  assert.equal(res.statusCode, 200);
  const events: Array<{ type: string; payload: Record<string, unknown> }> = [];
  const waiters: Array<() => void> = [];
  void readSse(res, (e) => {
    events.push(e);
    for (const w of waiters.splice(0)) w();
  });
  const seen = (pred: (e: { type: string; payload: Record<string, unknown> }) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (events.some(pred) ? resolve() : waiters.push(check));
      check();
    });
  const client = mqtt.connect(box.app.brokerUrl);
  try {
    await new Promise<void>((resolve, reject) => client.once('connect', () => resolve()).once('error', reject));
    await client.publishAsync('homeassistant/switch/test_plug/config', JSON.stringify({ name: 'Test Plug', uniq_id: 'test_plug', cmd_t: 'test/plug/set', stat_t: 'test/plug/state', dev: { ids: ['test_plug'], name: 'Test Plug', sa: 'Hall' } }), { retain: true });
    await seen((e) => e.type === 'plugin.home.devices');
    await client.publishAsync('test/plug/state', 'ON');
    await seen((e) => e.type === 'plugin.home.state' && e.payload.name === 'Test Plug' && (e.payload.state as { state?: string }).state === 'on');
    const st = events.find((e) => e.type === 'plugin.home.state' && e.payload.name === 'Test Plug')!;
    assert.equal(st.payload.area, 'Hall');
    assert.equal(st.payload.component, 'switch');
    assert.equal(st.payload.available, true);
    // The activity stream's events do not come on it.
    assert.ok(events.every((e) => e.type.startsWith('plugin.home.')), JSON.stringify(events.map((e) => e.type)));
  } finally {
    client.end(true);
    res.destroy();
  }
});

/** Server-sent events of `res`, each `data:` line parsed, until it ends. */
async function readSse(res: http.IncomingMessage, onEvent: (e: { type: string; payload: Record<string, unknown> }) => void): Promise<void> {
  let buf = '';
  try {
    for await (const c of res) {
      buf += (c as Buffer).toString('utf8');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (data) onEvent(JSON.parse(data.slice(6)) as { type: string; payload: Record<string, unknown> });
      }
    }
  } catch {
    /* destroyed at the end of the test */
  }
}
