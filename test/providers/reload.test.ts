/**
 * Adapter hot reload: a changed file is picked up (fs.watch); a broken new
 * version keeps the last good one and the log says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { LuaAdaptedProvider } from '../../src/providers/lua-provider.js';
import { startLlmTestServer } from '../support/llm-test-server.js';
import { adaptersDir, captureLogger } from './helpers.js';
import { waitUntil } from '../support/wait.js';


test('a changed adapter file is reloaded; a broken one keeps the last good version and logs why', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-adapters-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'ollama.lua');
  const original = fs.readFileSync(path.join(adaptersDir, 'ollama.lua'), 'utf8');
  fs.writeFileSync(file, original);
  const log = captureLogger();
  const reg = new AdapterRegistry(dir, { log, allowHost: () => true });
  t.after(() => reg.close());
  const srv = await startLlmTestServer();
  t.after(() => srv.close());
  const adapter = reg.get('ollama');
  const p = new LuaAdaptedProvider({ name: 'o', adapter, baseUrl: srv.url, model: 'm' });
  assert.equal(adapter.generation, 1);

  // 1. a valid change: the adapter now upper-cases streamed content
  const upper = original
    .replace(/return adapter\s*$/, 'local orig = adapter.transform_stream_chunk\nadapter.transform_stream_chunk = function(line)\n  local c = orig(line)\n  if c.content then c.content = c.content:upper() end\n  return c\nend\nreturn adapter\n')
    .replace(/adapter\.version = "[^"]*"/, 'adapter.version = "9.9.9"');
  assert.notEqual(upper, original);
  fs.writeFileSync(file, upper);
  await waitUntil(() => adapter.generation === 2, 'reload of the valid version');
  assert.equal(adapter.version, '9.9.9');
  srv.enqueue({ content: 'hello world' });
  let text = '';
  for await (const e of p.chatStream({ messages: [{ role: 'user', content: 'x' }] })) if (e.type === 'content') text += e.text;
  assert.equal(text, 'HELLO WORLD');

  // 2. a syntax error: refused, last good kept, reason logged with line
  fs.writeFileSync(file, 'local adapter = {\nadapter.name = \n');
  await waitUntil(() => adapter.lastReloadError !== undefined, 'refused reload');
  assert.equal(adapter.generation, 2);
  assert.match(adapter.lastReloadError!, /ollama\.lua:\d+/);
  const warn = log.lines.find((l) => l.level === 'warn' && /keeping the last good version/.test(l.msg ?? ''));
  assert.ok(warn, 'the refusal is logged');
  srv.enqueue({ content: 'still works' });
  text = '';
  for await (const e of p.chatStream({ messages: [{ role: 'user', content: 'x' }] })) if (e.type === 'content') text += e.text;
  assert.equal(text, 'STILL WORKS');

  // 3. loads but misses a required function: refused too
  fs.writeFileSync(file, 'return { name = "x", endpoint = "/api/chat", transform_request = function() return "{}" end }');
  await waitUntil(() => /transform_response/.test(adapter.lastReloadError ?? ''), 'refusal of the incomplete version');
  assert.equal(adapter.generation, 2);

  // 4. a main chunk that loops forever is stopped by the budget and refused
  fs.writeFileSync(file, 'while true do end');
  await waitUntil(() => /budget/.test(adapter.lastReloadError ?? ''), 'refusal of the looping version');
  assert.equal(adapter.generation, 2);

  // 5. the original again (replaced by rename, as editors do)
  const tmp = path.join(dir, 'ollama.lua.tmp');
  fs.writeFileSync(tmp, original);
  fs.renameSync(tmp, file);
  await waitUntil(() => adapter.generation === 3, 'reload after rename');
  assert.equal(adapter.lastReloadError, undefined);
  srv.enqueue({ content: 'back to normal' });
  const r = await p.chat({ messages: [{ role: 'user', content: 'x' }] });
  assert.equal(r.content, 'back to normal');
});

test('reload() can also be called directly and reports the outcome', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-adapters-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.copyFileSync(path.join(adaptersDir, 'openai.lua'), path.join(dir, 'openai.lua'));
  const reg = new AdapterRegistry(dir, { log: captureLogger() });
  t.after(() => reg.close());
  const a = reg.get('openai');
  assert.equal(a.reload(), true);
  fs.writeFileSync(path.join(dir, 'openai.lua'), 'error("boom")');
  assert.equal(a.reload(), false);
  assert.match(a.lastReloadError!, /openai\.lua:1: boom|boom/);
  assert.equal(a.endpoint, '/v1/chat/completions');
  fs.rmSync(path.join(dir, 'openai.lua'));
  assert.equal(a.reload(), false);
  assert.match(a.lastReloadError!, /cannot read/);
  assert.throws(() => reg.get('missing'), /missing/);
});

test('history messages are converted once and cached; a changed message or a reloaded adapter converts again', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-adapters-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'counting.lua');
  const script = (tag: string) => `
    local a = { name = "counting", endpoint = "/api/chat" }
    function a.transform_message(m) log("info", "convert " .. m.content); m.content = m.content .. "${tag}"; return m end
    function a.transform_request(raw) local r = json.decode(raw); for i = 1, #r.messages do r.messages[i] = a.transform_message(r.messages[i]) end; return r end
    function a.transform_response(raw) return json.decode(raw) end
    function a.transform_stream_chunk(line) return json.decode(line) end
    return a`;
  fs.writeFileSync(file, script('!'));
  const log = captureLogger();
  const reg = new AdapterRegistry(dir, { log });
  t.after(() => reg.close());
  const a = reg.get('counting');
  const conversions = () => log.lines.filter((l) => /^convert /.test(l.msg ?? '')).length;
  const req = { model: 'm', messages: [{ role: 'user' as const, content: '一' }, { role: 'assistant' as const, content: 'two' }] };
  const first = JSON.parse(await a.transformRequest(req)) as { messages: Array<{ content: string }>; model: string };
  assert.deepEqual(first.messages.map((m) => m.content), ['一!', 'two!']);
  assert.equal(first.model, 'm');
  assert.equal(conversions(), 2);
  // same history plus one new message: only the new one is converted
  const second = JSON.parse(await a.transformRequest({ ...req, messages: [...req.messages, { role: 'user', content: 'three' }] })) as { messages: Array<{ content: string }> };
  assert.deepEqual(second.messages.map((m) => m.content), ['一!', 'two!', 'three!']);
  assert.equal(conversions(), 3);
  // a changed message is converted again
  await a.transformRequest({ ...req, messages: [{ role: 'user', content: '一 changed' }] });
  assert.equal(conversions(), 4);
  // a reload drops the cache
  fs.writeFileSync(file, script('?'));
  assert.equal(a.reload(), true);
  const third = JSON.parse(await a.transformRequest(req)) as { messages: Array<{ content: string }> };
  assert.deepEqual(third.messages.map((m) => m.content), ['一?', 'two?']);
});

test('adapter_base: a variant builds on another adapter, reloads with it, and cannot build on itself', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-adapters-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'openai.lua'), fs.readFileSync(path.join(adaptersDir, 'openai.lua')));
  fs.writeFileSync(path.join(dir, 'deepseek.lua'), fs.readFileSync(path.join(adaptersDir, 'deepseek.lua')));
  fs.writeFileSync(path.join(dir, 'loop.lua'), 'return adapter_base("loop")\n');
  const reg = new AdapterRegistry(dir, { log: captureLogger(), allowHost: () => true });
  t.after(() => reg.close());
  const ds = reg.get('deepseek');
  assert.equal(ds.info.name, 'deepseek');
  assert.equal(ds.info.endpoint, '/chat/completions');
  assert.deepEqual([...ds.bases], ['openai']);
  assert.throws(() => reg.get('loop'), /builds on itself/);
  // Changing the base reloads the variant.
  const gen = ds.generation;
  const base = fs.readFileSync(path.join(dir, 'openai.lua'), 'utf8').replace('adapter.version = "1.0.0"', 'adapter.version = "1.0.1"');
  fs.writeFileSync(path.join(dir, 'openai.lua'), base);
  await waitUntil(() => ds.generation > gen, 'deepseek reload after openai.lua changed');
});
