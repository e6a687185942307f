/**
 * Issue 14 "config set accepts ...": every setting the service registers
 * (registerAllSettings) is validated as a kind: the voice language is an enum,
 * LLM base URLs and the MQTT URL are URLs of their schemes, a source in the
 * order needs its API key when it is a hosted API; settings read only at
 * start say so (restart) and the registry says which were changed since a
 * moment (the service's start).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry, urlProblem } from '../../src/config/registry.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { registerAllSettings } from '../../src/service/settings.js';

function registry(): { c: ConfigRegistry; done: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-validation-'));
  const c = new ConfigRegistry(path.join(dir, 'settings.db'), { env: {} });
  registerAllSettings(c);
  return { c, done: () => (c.close(), rmSync(dir, { recursive: true, force: true })) };
}

test('the issue 14 inputs are refused with the key, what is expected and what was given', () => {
  const { c, done } = registry();
  try {
    assert.throws(() => c.setFromString('plugin.voice.language', 'fr'), (e: unknown) => e instanceof ConfigError && /plugin\.voice\.language/.test(e.message) && /one of en, zh/.test(e.message));
    assert.throws(() => c.setFromString('core.llm.sources.ollama.base_url', 'not-a-url'), /core\.llm\.sources\.ollama\.base_url.*URL http:\/\/, https:\/\/.*"not-a-url" is not a URL/);
    assert.throws(() => c.setFromString('plugin.mqtt.url', 'localhost:1883'), /plugin\.mqtt\.url.*scheme localhost:.*mqtt:\/\/host/);
    assert.throws(() => c.setFromString('core.llm.sources_order', '["deepseek"]'), /deepseek, whose API key is not set .*core\.llm\.sources\.deepseek\.api_key/);
    // A context window that cannot hold the system prompt, or larger than any model's (a newcomer's num_ctx 1 and 99999999999 were taken).
    // The prompt budget's core.agent.context_window had no range at all. 512 passed while doctor then failed (the
    // box's prompt with its tools is about 2300 tokens); the reason reads as a sentence after "value".
    for (const key of ['core.llm.num_ctx', 'core.llm.sources.ollama.context_window', 'core.agent.context_window']) {
      for (const small of ['1', '512', '2047']) {
        assert.throws(() => c.setFromString(key, small), (e: unknown) => e instanceof ConfigError && e.message.includes(key) && new RegExp(`value must be 0 \\(the model's own window\\) or at least 2048 tokens: ${small} cannot hold the box's system prompt`).test(e.message), `${key} ${small}`);
      }
      assert.throws(() => c.setFromString(key, '99999999999'), (e: unknown) => e instanceof ConfigError && e.message.includes(key), key);
    }
    // A tester's report watch of 1 ms: every command was then said to have gone unreported.
    for (const small of ['1', '499']) {
      assert.throws(() => c.setFromString('plugin.home.report_timeout_ms', small), (e: unknown) => e instanceof ConfigError && /plugin\.home\.report_timeout_ms/.test(e.message) && /must be 0 \(not watched\) or at least 500 ms/.test(e.message), small);
    }
    // Nothing was stored.
    assert.deepEqual(c.list('').filter((r) => r.source === 'stored'), []);
  } finally {
    done();
  }
});

test('good values pass: enum members, URLs of the scheme, empty MQTT URL (embedded broker), a keyed or local source', () => {
  const { c, done } = registry();
  try {
    c.setFromString('plugin.voice.language', 'zh');
    c.setFromString('plugin.home.report_timeout_ms', '0');
    c.setFromString('plugin.home.report_timeout_ms', '500');
    c.setFromString('core.llm.sources.ollama.base_url', 'http://192.168.1.20:11434');
    c.setFromString('plugin.mqtt.url', 'mqtt://localhost:1883');
    c.setFromString('plugin.mqtt.url', '');
    c.set('core.llm.sources.deepseek.api_key', 'sk-test');
    c.setFromString('core.llm.sources_order', '["deepseek", "ollama"]');
    assert.deepEqual(c.get('core.llm.sources_order'), ['deepseek', 'ollama']);
    // A local OpenAI-compatible server (LM Studio, llama.cpp) needs no key.
    c.set('core.llm.sources.deepseek.api_key', '');
    c.set('core.llm.sources.deepseek.base_url', 'http://127.0.0.1:8080');
    c.setFromString('core.llm.sources_order', '["deepseek"]');
    for (const key of ['core.llm.num_ctx', 'core.llm.sources.ollama.context_window', 'core.agent.context_window']) {
      for (const ok of ['0', '2048', '32768']) c.setFromString(key, ok);
    }
  } finally {
    done();
  }
});

test('urlProblem names the fault', () => {
  const spec = { schemes: ['mqtt', 'mqtts'] } as const;
  assert.equal(urlProblem('mqtt://broker.lan:1883', spec), undefined);
  assert.match(urlProblem('', spec) ?? '', /empty/);
  assert.equal(urlProblem('', { ...spec, allowEmpty: true }), undefined);
  assert.match(urlProblem('http://x', spec) ?? '', /scheme http:/);
  assert.match(urlProblem('broker', spec) ?? '', /not a URL/);
});

test('restart-only settings are marked and reported once changed after a moment', () => {
  const { c, done } = registry();
  try {
    const row = (k: string) => c.list(k).find((r) => r.key === k);
    assert.equal(row('plugin.mqtt.url')?.restart, true);
    assert.equal(row('core.service.demo_home')?.restart, true);
    assert.equal(row('core.agent.max_tool_rounds')?.restart, undefined, 'read at every turn');
    const since = Date.now() - 1;
    c.set('core.agent.max_tool_rounds', 3);
    assert.deepEqual(c.restartPending(since), []);
    c.set('plugin.mqtt.url', 'mqtt://10.0.0.2:1883');
    const pending = c.restartPending(since);
    assert.deepEqual(pending.map((p) => p.key), ['plugin.mqtt.url']);
    assert.ok(pending[0]!.changed_at >= since);
    assert.deepEqual(c.restartPending(Date.now() + 1000), [], 'nothing changed after a later start');
    // Set to the value in force (the default, or the stored one): no change, so nothing to restart for.
    const later = Date.now();
    c.set('plugin.webui.port', c.get('plugin.webui.port'));
    c.set('plugin.mqtt.url', 'mqtt://10.0.0.2:1883');
    assert.deepEqual(c.restartPending(later).map((p) => p.key), [], 'the same values again');
    while (Date.now() <= later); // the change below must fall in a later millisecond than `later` (the store's clock)
    c.set('plugin.mqtt.url', 'mqtt://10.0.0.3:1883');
    assert.deepEqual(c.restartPending(later).map((p) => p.key), ['plugin.mqtt.url'], 'a new value is pending');
    // Deleted: the default applies after a restart (a newcomer's deleted wake phrase was no longer pending while still spotted).
    const started = Date.now();
    while (Date.now() <= started);
    assert.equal(c.delete('plugin.mqtt.url'), true);
    assert.deepEqual(c.restartPending(started).map((p) => p.key), ['plugin.mqtt.url'], 'a value in force at the start, deleted since, is pending');
    assert.deepEqual(c.restartPending(later).map((p) => p.key), [], 'one stored after the start and deleted again leaves what the service read');
    c.set('plugin.webui.port', c.get('plugin.webui.port'));
    c.delete('plugin.webui.port');
    assert.deepEqual(c.restartPending(started).map((p) => p.key), ['plugin.mqtt.url'], 'deleting a stored default changes nothing');
    assert.deepEqual(c.restartPending(Date.now() + 1000), [], 'nothing after a later start');
  } finally {
    done();
  }
});

test('a wake phrase the start would refuse is refused at config set, and the wake settings say they need a restart (a newcomer\'s "hello" was stored, refused at start, and still offered by status and doctor)', () => {
  const { c, done } = registry();
  try {
    assert.throws(() => c.setFromString('plugin.voice.wake_phrase', 'hello'), (e: unknown) => e instanceof ConfigError && /plugin\.voice\.wake_phrase/.test(e.message) && /"hello" has 2 syllable\(s\); a wake phrase needs 4 or more/.test(e.message));
    assert.throws(() => c.setFromString('plugin.voice.wake_phrase', 'hey glorbnak'), /not in the pronouncing dictionary: glorbnak/);
    c.setFromString('plugin.voice.wake_phrase', 'hey home agent');
    c.setFromString('plugin.voice.wake_phrase', '');
    const restart = new Set(c.list('plugin.voice.').filter((r) => r.restart).map((r) => r.key));
    for (const k of ['wake_phrase', 'wake_phrase_threshold', 'wyoming_wake_host', 'wyoming_wake_port', 'wake_words']) assert.ok(restart.has(`plugin.voice.${k}`), `${k} is read at start`);
  } finally {
    done();
  }
});

test('status: a restart setting only its plugin reads at its start is no longer pending once that plugin has started again (a tester\'s status said "restart needed" after plugins restart voice); the service\'s own ones stay pending', async () => {
  const { pendingRestarts } = await import('../../src/service/app.js');
  const pending = [
    { key: 'plugin.voice.wake_words', changed_at: 1000 },
    { key: 'plugin.webui.port', changed_at: 1000 },
    { key: 'plugin.mqtt.url', changed_at: 1000 },
    { key: 'plugin.home.discovery_prefix', changed_at: 3000 },
  ];
  const plugin = (name: string, started_at: number | undefined, state: 'running' | 'failed' = 'running') => ({ name, state, tools: [], channels: [], restarts: 0, ...(started_at !== undefined ? { started_at } : {}) });
  const atStart = [plugin('voice', 500), plugin('webui', 500), plugin('home', 500)];
  assert.deepEqual(pendingRestarts(pending, atStart).map((p) => p.key), pending.map((p) => p.key), 'changed after every plugin started: all pending');
  const voiceAgain = [plugin('voice', 2000), plugin('webui', 500), plugin('home', 2000)];
  assert.deepEqual(pendingRestarts(pending, voiceAgain).map((p) => p.key), ['plugin.webui.port', 'plugin.mqtt.url', 'plugin.home.discovery_prefix'], 'voice restarted after its change; home before');
  const failed = [plugin('voice', undefined, 'failed'), plugin('webui', 2000), plugin('home', 4000)];
  assert.deepEqual(pendingRestarts(pending, failed).map((p) => p.key), ['plugin.voice.wake_words', 'plugin.mqtt.url'], 'a plugin that is not running applied nothing; the service reads plugin.mqtt.url');
});

test('an unknown key names the registered keys close to it (a newcomer had no did-you-mean)', () => {
  const { c, done } = registry();
  try {
    assert.throws(() => c.setFromString('plugin.home.aera', 'Kitchen'), /plugin\.home\.aera: unknown setting .*did you mean plugin\.home\.area\?/);
    assert.throws(() => c.get('plugin.voice.pausems'), /did you mean plugin\.voice\.pause_ms\?/);
    assert.throws(() => c.setFromString('core.home.area', 'Kitchen'), /did you mean plugin\.home\.area\?/, 'the right name under another prefix');
    // A tester's upper-case key got no suggestion.
    assert.throws(() => c.setFromString('plugin.HOME.AREA', 'Kitchen'), /plugin\.HOME\.AREA: unknown setting .*did you mean plugin\.home\.area\?/);
    assert.throws(() => c.setFromString('PLUGIN.home.area', 'Kitchen'), /did you mean plugin\.home\.area\?/);
    assert.throws(() => c.setFromString('core.nothing.like.this', '1'), (e: unknown) => e instanceof ConfigError && !/did you mean/.test(e.message));
  } finally {
    done();
  }
});
