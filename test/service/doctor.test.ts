/**
 * `homeagent doctor`: each check against real peers (Mosquitto, our LLM test
 * server, a fake sysfs tree, SQLite files) and a failure for each kind with
 * the fix it suggests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { checkBroker, checkDatabases, checkDisk, checkGpio, checkLlmSource, checkPluginSandbox, runDoctor, startServiceHint } from '../../src/service/doctor.js';
import { probeSandbox } from '../../src/plugins/external/sandbox.js';
import { startMosquitto } from '../support/mosquitto.js';
import { startLlmTestServer } from '../support/llm-test-server.js';

test('LLM source: reachable with the model and tools; missing model; no tools; unreachable; refused key', async () => {
  const srv = await startLlmTestServer({ models: [{ name: 'qwen2.5:3b', capabilities: ['completion', 'tools'] }, { name: 'gemma:2b', capabilities: ['completion'] }] });
  try {
    const ok = await checkLlmSource({ name: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'qwen2.5:3b' });
    assert.equal(ok.ok, true, ok.detail);
    assert.match(ok.detail, /supports tools/);
    const missing = await checkLlmSource({ name: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'llama3.1:8b' });
    assert.equal(missing.ok, false);
    assert.equal(missing.fix, 'ollama pull llama3.1:8b');
    const noTools = await checkLlmSource({ name: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'gemma:2b' });
    assert.equal(noTools.ok, false);
    assert.match(noTools.detail, /does not support tools/);
  } finally {
    await srv.close();
  }
  const down = await checkLlmSource({ name: 'ollama', adapter: 'ollama', base_url: 'http://127.0.0.1:9', model: 'x' });
  assert.equal(down.ok, false);
  assert.match(down.fix ?? '', /start Ollama/);
  const fake401: typeof fetch = async () => new Response('{"error":{"message":"bad key"}}', { status: 401 });
  const refused = await checkLlmSource({ name: 'deepseek', adapter: 'deepseek', base_url: 'https://api.example', model: 'deepseek-chat', api_key: 'x' }, fake401);
  assert.equal(refused.ok, false);
  assert.match(refused.fix ?? '', /core\.llm\.sources\.deepseek\.api_key/);
});

test('broker: connects to a real Mosquitto; a dead port fails with a fix', async () => {
  const broker = await startMosquitto();
  try {
    const ok = await checkBroker(broker.url);
    assert.equal(ok.ok, true, ok.detail);
  } finally {
    await broker.stop();
  }
  const bad = await checkBroker('mqtt://127.0.0.1:9');
  assert.equal(bad.ok, false);
  assert.match(bad.fix ?? '', /plugin\.mqtt\.url/);
  assert.equal((await checkBroker(undefined)).ok, true, 'the embedded broker needs no check');
});

test('gpio, disk and databases', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-doctor-'));
  try {
    const sys = path.join(dir, 'sys');
    assert.equal(checkGpio(sys).ok, false);
    mkdirSync(path.join(sys, 'class', 'gpio', 'gpiochip512'), { recursive: true });
    writeFileSync(path.join(sys, 'class', 'gpio', 'export'), '');
    const g = checkGpio(sys);
    assert.equal(g.ok, true, g.detail);
    assert.equal(checkDisk(dir).ok, true);
    assert.equal(checkDisk(dir, Number.MAX_SAFE_INTEGER).ok, false);
    const good = new Database(path.join(dir, 'good.db'));
    good.exec('CREATE TABLE t (x)');
    good.close();
    writeFileSync(path.join(dir, 'broken.db'), 'this is not a database at all, just text that is long enough to be read as a header..........');
    const newer = new Database(path.join(dir, 'settings.db'));
    newer.pragma('user_version = 99');
    newer.close();
    const dbs = Object.fromEntries(checkDatabases(dir).map((c) => [c.name, c]));
    assert.equal(dbs['database good.db']!.ok, true);
    assert.equal(dbs['database good.db']!.detail, 'integrity ok, schema version 0');
    assert.equal(dbs['database settings.db']!.ok, false);
    assert.match(dbs['database settings.db']!.detail, /schema version 99, newer than this release supports \(1\)/);
    assert.match(dbs['database settings.db']!.fix ?? '', /homeagent rollback/);
    assert.equal(dbs['database broken.db']!.ok, false);
    assert.ok(dbs['database broken.db']!.fix);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('runDoctor reports every check and an overall verdict', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-doctor-'));
  try {
    const r = await runDoctor({ dataDir: dir, sources: [], sysfsRoot: path.join(dir, 'nosys') });
    const names = r.checks.map((c) => c.name);
    for (const n of ['audio playback', 'audio capture', 'gpio', 'mqtt broker', 'llm sources', 'disk space', 'plugin sandbox']) assert.ok(names.includes(n), n);
    assert.equal(r.ok, false);
    assert.ok(r.checks.filter((c) => !c.ok).every((c) => c.fix), 'every failure says what to fix');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('plugin sandbox: confined with bubblewrap here (CI runs as root); unsandboxed is said plainly, a failure only with process plugins installed', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-doctor-'));
  try {
    const auto = checkPluginSandbox(dir, 'auto');
    assert.equal(auto.ok, true);
    assert.match(auto.detail, /no process plugins installed; process plugins run in a bubblewrap sandbox/);
    mkdirSync(path.join(dir, 'plugins', 'solar'), { recursive: true });
    writeFileSync(path.join(dir, 'plugins', 'solar', 'plugin.json'), JSON.stringify({ name: 'solar', version: '1.0.0', kind: 'process', entry: 'main.py' }));
    const off = checkPluginSandbox(dir, 'off');
    assert.equal(off.ok, true, 'off is the user\'s explicit choice');
    assert.match(off.detail, /1 process plugin\(s\) installed \(solar\); process plugins are NOT sandboxed .*capabilities are advisory/);
    const withBwrap = process.env.HOMEAGENT_BWRAP;
    process.env.HOMEAGENT_BWRAP = path.join(dir, 'no-such-bwrap');
    try {
      probeSandbox(true);
      const missing = checkPluginSandbox(dir, 'auto');
      assert.equal(missing.ok, false);
      assert.match(missing.detail, /NOT sandboxed: .*capabilities are advisory/);
      assert.match(missing.fix!, /apt install bubblewrap/);
    } finally {
      if (withBwrap === undefined) delete process.env.HOMEAGENT_BWRAP;
      else process.env.HOMEAGENT_BWRAP = withBwrap;
      probeSandbox(true);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('how to start the service: systemd where its unit is installed, the checkout\'s script elsewhere (a newcomer in a checkout was told "sudo systemctl start homeagent")', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-unit-'));
  try {
    const unit = path.join(dir, 'homeagent.service');
    assert.match(startServiceHint('/tmp/box2', [unit]), /^start it: \.\/scripts\/run\.sh --data-dir \/tmp\/box2 in the checkout, or homeagent --data-dir \/tmp\/box2 run \(no systemd unit/);
    writeFileSync(unit, '[Unit]\n');
    assert.match(startServiceHint('/tmp/box2', [unit]), /^sudo systemctl start homeagent; .*journalctl -u homeagent/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
