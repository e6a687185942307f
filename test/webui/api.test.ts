/**
 * The WebUI's HTTP API (issue 16 "A documented HTTP API") over real HTTPS
 * against the running service: the OpenAPI file and the routes served agree
 * both ways; settings are listed, read, set and refused as the CLI does;
 * malformed requests get a 4xx naming what is wrong; ask streams the reply as
 * the model writes it (from the LLM test server) as the session's person, and
 * stop cuts a long one; the activity stream carries every turn's events.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startWebBox, readNdjson, type WebBox } from './helpers.js';
import { waitUntil } from '../support/wait.js';

let box: WebBox;
let token: string;
before(async () => {
  box = await startWebBox();
  token = await box.scriptLogin();
});
after(async () => box.close());

type Doc = { paths: Record<string, Record<string, { security?: unknown[] }>> };
const doc = JSON.parse(readFileSync(new URL('../../src/plugins/webui/openapi.json', import.meta.url), 'utf8')) as Doc;
const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();

test('every route served is documented in openapi.json, and every documented route is served', async () => {
  const served = box.app.webui.apiRoutes().map((r) => `${r.method} ${r.path}`).sort();
  assert.deepEqual(served, documented);
  // Routes served without a session are exactly those documented with `security: []`.
  const open = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).filter(([, o]) => Array.isArray(o.security) && o.security.length === 0).map(([m]) => `${m.toUpperCase()} ${p}`)).sort();
  assert.deepEqual(box.app.webui.apiRoutes().filter((r) => !r.auth).map((r) => `${r.method} ${r.path}`).sort(), open);
  // Over the wire: each documented route answers (never "no such route" or "method not allowed").
  const first = await readNdjson(await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'hello' }, bearer: token }));
  const turn = first[0].input_id as string;
  for (const entry of documented) {
    const [method, template] = entry.split(' ') as [string, string];
    let p = '/api/v1' + template.replace('{key}', 'core.output.mode').replace('{id}', template.startsWith('/turns/') ? turn : 'nosuchid');
    if (p.endsWith('/context')) p += '?round=1';
    if (template === '/knowledge/{name}') p = '/api/v1/knowledge/homeagent-guide';
    if (p.endsWith('/memory/recall')) p += '?q=kettle';
    if (p.endsWith('/events') || p.endsWith('/conversation/ask')) {
      const res = await box.stream(p, { method, bearer: token, ...(method === 'POST' ? { body: { text: 'hello' } } : {}) });
      assert.equal(res.statusCode, 200, entry);
      res.destroy();
      continue;
    }
    if (p.endsWith('/auth/logout') || p.endsWith('/conversation/stop') || (method === 'DELETE' && p.includes('/settings/'))) {
      // State-changing routes with effects on this test's session or the box: answered, checked elsewhere; here with a fresh session.
      const t = await box.scriptLogin();
      const r = await box.req(p, { method, bearer: t });
      assert.equal(r.status, 200, `${entry}: ${r.text}`);
      continue;
    }
    if (entry === 'POST /memory/edit' || entry === 'POST /memory/forget') {
      // Served, and refusing a body that names nothing to change (test/webui/memory-devices-api.test.ts checks what they do).
      const r = await box.req(p, { method, bearer: token, body: {} });
      assert.equal(r.status, 400, `${entry}: ${r.text}`);
      assert.equal(r.json.code, 'BAD_ARGUMENT', entry);
      continue;
    }
    if (/ \/(plugins|logs|update)\b/.test(entry)) {
      // The Health page's routes (test/webui/health.test.ts checks what they do): served, and answered without a server error.
      const r = await box.req(p.replace('{name}', 'nosuchplugin'), { method, bearer: token });
      assert.notEqual(r.json?.code, 'NO_ROUTE', entry);
      assert.ok(r.status !== 405 && r.status < 500, `${entry}: ${r.status} ${r.text}`);
      continue;
    }
    const r = await box.req(p, { method, bearer: token, ...(method === 'PUT' ? { body: { value: 'auto' } } : method === 'POST' ? { body: { token: 'not-a-link' } } : {}) });
    assert.notEqual(r.json?.code, 'NO_ROUTE', entry);
    assert.notEqual(r.status, 405, entry);
    assert.ok(r.status === 200 || (entry === 'GET /voice' && r.status === 426 && r.json.code === 'UPGRADE_REQUIRED') || (entry === 'DELETE /sessions/{id}' && r.status === 404 && r.json.code === 'NOT_FOUND') || (entry === 'POST /auth/login' && r.status === 401 && r.json.code === 'LINK_INVALID'), `${entry}: ${r.status} ${r.text}`);
  }
  // And what is not documented is not served.
  const none = await box.req('/api/v1/no/such/route', { bearer: token });
  assert.equal(none.status, 404);
  assert.equal(none.json.code, 'NO_ROUTE');
  const wrong = await box.req('/api/v1/health', { method: 'DELETE', bearer: token });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.allow, 'GET');
  // The document itself is served from the package.
  const served2 = await box.req('/api/v1/openapi.json');
  assert.deepEqual(served2.json, doc);
});

test('settings: listed with types, ranges and descriptions, set and refused as `homeagent config set` does', async () => {
  const list = await box.req('/api/v1/settings?prefix=plugin.webui.', { bearer: token });
  assert.equal(list.status, 200);
  const port = (list.json as Array<Record<string, unknown>>).find((r) => r.key === 'plugin.webui.port')!;
  assert.equal(port.type, 'integer');
  assert.equal(port.min, 0);
  assert.equal(port.max, 65535);
  assert.equal(port.restart, true);
  assert.equal(port.default, 8080);
  assert.equal(port.source, 'env');
  assert.match(String(port.description), /TCP port/);
  const mode = await box.req('/api/v1/settings/core.output.mode', { bearer: token });
  assert.ok(Array.isArray(mode.json.enum) && mode.json.enum.includes('explicit'));

  const set = await box.req('/api/v1/settings/core.agent.max_tool_rounds', { method: 'PUT', body: { raw: '4' }, bearer: token });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.json.value, 4);
  assert.equal(box.app.settings.get('core.agent.max_tool_rounds'), 4);
  const typed = await box.req('/api/v1/settings/core.agent.max_tool_rounds', { method: 'PUT', body: { value: 5 }, bearer: token });
  assert.equal(typed.json.value, 5);
  const bad = await box.req('/api/v1/settings/core.agent.max_tool_rounds', { method: 'PUT', body: { raw: 'many' }, bearer: token });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'CONFIG_INVALID');
  assert.match(bad.json.error, /core\.agent\.max_tool_rounds/);
  assert.match(bad.json.error, /expected integer/);
  const badEnum = await box.req('/api/v1/settings/core.output.mode', { method: 'PUT', body: { value: 'loud' }, bearer: token });
  assert.equal(badEnum.status, 400);
  assert.match(badEnum.json.error, /core\.output\.mode/);
  assert.equal(box.app.settings.get('core.output.mode'), 'auto');
  const restart = await box.req('/api/v1/settings/plugin.webui.link_ttl_s', { method: 'PUT', body: { value: 300 }, bearer: token });
  assert.equal(restart.json.value, 300);
  const restartNote = await box.req('/api/v1/settings/core.plugins.optional', { method: 'PUT', body: { value: ['serial'] }, bearer: token });
  assert.deepEqual(restartNote.json.value, ['serial']);
  assert.match(restartNote.json.note, /restart/);
  const del = await box.req('/api/v1/settings/core.agent.max_tool_rounds', { method: 'DELETE', bearer: token, origin: true });
  assert.equal(del.status, 200);
  assert.equal(del.json.source, 'default');
  const unknown = await box.req('/api/v1/settings/core.no.such', { bearer: token });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'UNKNOWN_SETTING');
  // Secrets are never shown.
  box.app.settings.set('core.llm.sources.deepseek.api_key', 'sk-very-secret');
  const secrets = await box.req('/api/v1/settings?prefix=core.llm.sources.deepseek', { bearer: token });
  assert.ok(!secrets.text.includes('sk-very-secret'));
  assert.equal((secrets.json as Array<Record<string, unknown>>).find((r) => r.key === 'core.llm.sources.deepseek.api_key')?.value, '********');
});

test('malformed requests get a 4xx naming what is wrong; a huge body is refused before it is read', async () => {
  const notJson = await box.req('/api/v1/conversation/ask', { method: 'POST', raw: '{"text": "hi"', headers: { 'content-type': 'application/json' }, bearer: token });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.json.code, 'BAD_JSON');
  const wrongType = await box.req('/api/v1/conversation/ask', { method: 'POST', raw: 'text=hi', headers: { 'content-type': 'application/x-www-form-urlencoded' }, bearer: token });
  assert.equal(wrongType.status, 415);
  const noText = await box.req('/api/v1/conversation/ask', { method: 'POST', body: { question: 'hi' }, bearer: token });
  assert.equal(noText.status, 400);
  assert.match(noText.json.error, /"text"/);
  // Invisible characters alone are no question (visibleText): refused, never sent to the LLM.
  const invisible = await box.req('/api/v1/conversation/ask', { method: 'POST', body: { text: '\u0000\u200b\u202e' }, bearer: token });
  assert.equal(invisible.status, 400);
  assert.match(invisible.json.error, /nothing visible/);
  const both = await box.req('/api/v1/settings/core.output.mode', { method: 'PUT', body: { value: 'auto', raw: 'auto' }, bearer: token });
  assert.equal(both.status, 400);
  const huge = await box.req('/api/v1/conversation/ask', { method: 'POST', raw: 'x'.repeat(10 * 1024 * 1024), headers: { 'content-type': 'application/json' }, bearer: token }).catch((err: Error) => ({ status: 0, json: { code: err.message } }));
  // Refused from Content-Length: 413 (or, if the server closed first, the write fails; never a 200).
  assert.ok(huge.status === 413 || huge.status === 0, String(huge.status));
  if (huge.status === 413) assert.equal(huge.json.code, 'BODY_TOO_LARGE');
  assert.equal(box.llm.chatRequests().filter((r) => JSON.stringify(r.body).includes('xxxxxxxx')).length, 0);
});

test('ask streams the reply as the model writes it, as the session person; stop cuts a long reply', async () => {
  const alice = await box.scriptLogin('Alice');
  box.llm.enqueue({ content: 'The kettle is a fine appliance for boiling water quickly.', tokensPerSecond: 200 });
  const res = await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'tell me about kettles' }, bearer: alice });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /application\/x-ndjson/);
  const lines = await readNdjson(res);
  const deltas = lines.filter((l) => l.type === 'delta');
  assert.ok(deltas.length > 3, `the reply came in pieces (${deltas.length})`);
  assert.equal(deltas.map((d) => d.text).join(''), 'The kettle is a fine appliance for boiling water quickly.');
  assert.equal(lines[0].type, 'accepted');
  const done = lines.at(-1);
  assert.equal(done.type, 'done');
  assert.equal(done.result.status, 'done');
  assert.match(done.result.reply, /kettle/);
  // Typed on a link made for Alice: Alice is the speaker.
  const started = await new Promise<Record<string, unknown>>((resolve) => {
    const off = box.app.kernel.bus.subscribe('test', 'turn.started', (ev) => {
      off();
      resolve(ev.input as unknown as Record<string, unknown>);
    });
    box.llm.enqueue({ content: 'Yes.' });
    void box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'who am I' }, bearer: alice }).then(readNdjson);
  });
  assert.equal(started.user, 'Alice');
  assert.equal((started.meta as Record<string, unknown>).person, 'Alice');
  assert.equal(started.channel, 'webui');

  // A long reply, stopped after its first pieces.
  box.llm.enqueue({ content: 'and more '.repeat(2000), tokensPerSecond: 100 });
  const long = await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'talk for a long time' }, bearer: alice });
  let pieces = 0;
  let stopped: Promise<unknown> | undefined;
  const all = await readNdjson(long, (l) => {
    if (l.type === 'delta' && ++pieces === 3) stopped = box.req('/api/v1/conversation/stop', { method: 'POST', bearer: alice });
  });
  assert.equal(((await stopped) as { status: number }).status, 200);
  const end = all.at(-1);
  assert.equal(end.type, 'done');
  assert.equal(end.result.status, 'interrupted');
  assert.ok(all.filter((l) => l.type === 'delta').length < 1000, 'the stream ended soon after stop');
});

test('the activity stream carries every turn live: input, LLM rounds with tool calls and results, outcome', async () => {
  const res = await box.stream('/api/v1/events?backlog=0', { bearer: token });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /text\/event-stream/);
  const events: Array<{ type: string; payload: Record<string, unknown> }> = [];
  let buf = '';
  res.on('data', (c: Buffer) => {
    buf += c.toString();
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (data) events.push(JSON.parse(data.slice(6)) as { type: string; payload: Record<string, unknown> });
    }
  });
  box.llm.enqueue({ tool_calls: [{ name: 'timer', arguments: { action: 'status' } }] }, { content: 'You have no timers.' });
  const ask = await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'any timers?' }, bearer: token });
  const lines = await readNdjson(ask);
  assert.ok(lines.some((l) => l.type === 'tool' && l.name === 'timer'), JSON.stringify(lines));
  await waitUntil(() => events.some((e) => e.type === 'turn.finished'), 'turn.finished on the activity stream');
  res.destroy();
  const types = events.map((e) => e.type);
  for (const t of ['raw_input', 'turn.started', 'llm.completed', 'tool.pre_execute', 'tool.executed', 'output', 'turn.finished']) assert.ok(types.includes(t), `${t} in ${types.join(',')}`);
  assert.ok(!types.includes('llm.delta'), 'deltas only when asked for');
  const rounds = events.filter((e) => e.type === 'llm.completed');
  assert.equal(rounds.length, 2);
  const call = events.find((e) => e.type === 'tool.executed')!.payload;
  assert.equal(call.name, 'timer');
  assert.equal(typeof call.result, 'string');
  // A page that opens later gets the recent events first (the backlog), never the per-token deltas.
  const later = await box.stream('/api/v1/events', { bearer: token });
  let text = '';
  await new Promise<void>((resolve) => {
    later.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('"turn.finished"')) resolve();
    });
  });
  later.destroy();
  assert.match(text, /"type":"turn.started"/);
});

test('a past turn: its events and what the model saw in each round, rebuilt from the run log', async () => {
  // A sentence the local templates do not know, so that the LLM answers it ("what timers do I have" is answered locally).
  box.llm.enqueue({ tool_calls: [{ name: 'timer', arguments: { action: 'status' } }] }, { content: 'None running.' });
  const lines = await readNdjson(await box.stream('/api/v1/conversation/ask', { method: 'POST', body: { text: 'tell me about my timers' }, bearer: token }));
  const turn = lines[0].input_id as string;
  const ev = await box.req(`/api/v1/turns/${turn}`, { bearer: token });
  assert.equal(ev.status, 200);
  const types = (ev.json.events as Array<{ type: string }>).map((e) => e.type);
  assert.equal(types[0], 'turn.started');
  assert.equal(types.at(-1), 'turn.finished');
  assert.ok(!types.includes('llm.delta'));
  // Round 2 saw the user's words and the tool's result; it is what the LLM test server received.
  const ctx = await box.req(`/api/v1/turns/${turn}/context?round=2`, { bearer: token });
  assert.equal(ctx.status, 200, ctx.text);
  const sent = box.llm.chatRequests().at(-1)!.body!.messages!;
  assert.equal(ctx.json.messages.length, sent.length);
  assert.ok(ctx.json.messages.some((m: { role: string; content: string }) => m.role === 'user' && m.content.includes('tell me about my timers')));
  assert.ok(ctx.json.messages.some((m: { role: string }) => m.role === 'tool'));
  const r1 = await box.req(`/api/v1/turns/${turn}/context?round=1`, { bearer: token });
  assert.equal(r1.json.messages.length, ctx.json.messages.length - 2, 'round 2 = round 1 + the tool call + its result');
  assert.equal((await box.req(`/api/v1/turns/${turn}/context?round=3`, { bearer: token })).status, 404);
  const bad = await box.req(`/api/v1/turns/${turn}/context?round=first`, { bearer: token });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error, /"round"/);
  assert.equal((await box.req('/api/v1/turns/no-such-turn', { bearer: token })).json.code, 'NOT_FOUND');
});

test('a page that stops reading the activity stream is dropped, not buffered; revoking a session ends its streams', async () => {
  const res = await box.stream('/api/v1/events?backlog=0', { bearer: token });
  await new Promise((r) => res.once('data', r));
  res.pause();
  assert.equal(box.app.webui.eventClients, 1);
  // Events of ~30 KB each until the service gives up on the reader (about 1 MB waiting, past the socket buffers).
  const big = 'x'.repeat(30_000);
  for (let i = 0; i < 2000 && box.app.webui.eventClients > 0; i++) {
    box.app.kernel.bus.publish('plugin.timers.changed', { change: 'started', id: `t${i}`, name: big, seconds: 1, ends_at: 0 });
    if (i % 20 === 0) await new Promise((r) => setImmediate(r));
  }
  assert.equal(box.app.webui.eventClients, 0, 'the stalled page was dropped');
  res.destroy();
  // Revoking a session ends the streams it opened (and no other).
  const other = await box.scriptLogin('Eve');
  const mine = await box.stream('/api/v1/events?backlog=0', { bearer: token });
  const eves = await box.stream('/api/v1/events?backlog=0', { bearer: other });
  await waitUntil(() => box.app.webui.eventClients === 2, 'two streams open');
  const ended = new Promise<void>((r) => eves.on('end', r));
  eves.resume();
  const eve = ((await box.req('/api/v1/sessions', { bearer: token })).json as Array<{ id: string; person?: string }>).find((e) => e.person === 'Eve')!;
  assert.equal((await box.req(`/api/v1/sessions/${eve.id}`, { method: 'DELETE', bearer: token })).status, 200);
  await ended;
  assert.equal(box.app.webui.eventClients, 1);
  mine.destroy();
});

test('memory: its numbers and what is remembered about a query, as `homeagent memory` says', async () => {
  const stats = await box.req('/api/v1/memory/stats', { bearer: token });
  assert.equal(stats.status, 200);
  assert.deepEqual(stats.json, box.app.memory!.stats());
  const found = await box.req('/api/v1/memory/recall?q=kettle', { bearer: token });
  assert.equal(found.status, 200);
  assert.deepEqual(found.json, JSON.parse(JSON.stringify(await box.app.memory!.recall('kettle'))));
  const none = await box.req('/api/v1/memory/recall?q=', { bearer: token });
  assert.equal(none.status, 400);
  assert.match(none.json.error, /"q"/);
});

test('health, status and devices answer what the CLI answers', async () => {
  const h = await box.req('/api/v1/health');
  assert.deepEqual({ ok: h.json.ok, https: h.json.https, push_to_talk: h.json.push_to_talk }, { ok: true, https: true, push_to_talk: 'available' });
  const st = await box.req('/api/v1/status', { bearer: token });
  assert.ok((st.json.plugins as Array<{ name: string; state: string }>).some((p) => p.name === 'webui' && p.state === 'running'));
  const dev = await box.req('/api/v1/devices', { bearer: token });
  assert.ok(Array.isArray(dev.json));
  // Without a session: refused.
  assert.equal((await box.req('/api/v1/status')).status, 401);
});
