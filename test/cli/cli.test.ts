/**
 * Issue 14 "The console and the CLI", tried as a new user would, with the
 * `homeagent` executable against the service started in-process (a real Unix
 * socket, the embedded broker with the demo home, an LLM nobody listens on):
 * - a closed pipe (`| head`) ends every subcommand quietly;
 * - `status` and `devices` print readable tables (brightness in percent, no
 *   epoch milliseconds, no phonemes) and JSON with --json;
 * - `ask` prints the reply as it streams;
 * - `logs` shows the MQTT commands sent and the errors logged;
 * - `config set` of a restart-only setting says so, and `status` says it
 *   was changed and awaits a restart;
 * - a second box's own entities on the same broker are not devices;
 * - the "model unreachable" answer follows the language of the question.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import { printResult } from '../../src/cli/format.js';
import { boxDiscovery, boxTopics } from '../../src/home/box-entity.js';
import { createLogger, setLogLevel } from '../../src/kernel/log.js';
import { waitUntil } from '../support/wait.js';
import { cli } from './run-cli.js';

describe('the homeagent CLI against a running service', () => {
  let app: App;
  let dir: string;
  let socket: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-cli14-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: { HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9', HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'on' } });
    await waitUntil(() => app.home.registry?.view('demo_kitchen_light')?.available === true, 'the demo home discovered', 60_000);
  });
  after(async () => {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every subcommand survives a closed pipe: no EPIPE, no stack trace', async () => {
    for (const args of [['config', 'list'], ['config', 'get', 'core.output.mode'], ['status'], ['devices'], ['--json', 'status'], ['plugins'], ['ask', 'turn', 'on', 'the', 'kitchen', 'light']]) {
      const r = await cli(['--socket', socket, ...args], { closeStdout: true });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /EPIPE|Error|at /, args.join(' '));
    }
  });

  test('devices: a table with brightness in percent; --json keeps the raw value and adds the percent', async () => {
    const r0 = await request(socket, 'ask', { text: 'set the kitchen light to 30 percent' }, undefined, { timeoutMs: 30_000 });
    assert.match((r0 as { reply: string }).reply, /Kitchen Light/);
    await waitUntil(() => app.home.registry?.view('demo_kitchen_light')?.state.brightness === 77, 'the light at 77/255');
    const table = await cli(['--socket', socket, 'devices']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME +ROOM +TYPE +STATE +ID$/);
    assert.match(table.stdout, /Kitchen Light +Kitchen +light +on, 30 % +demo_kitchen_light/);
    assert.match(table.stdout, /Bedroom Temperature +Bedroom +sensor +19\.5 °C/);
    assert.doesNotMatch(table.stdout, /\b77\b/);
    const json = await cli(['--socket', socket, '--json', 'devices']);
    const devices = JSON.parse(json.stdout) as Array<{ id: string; state: { brightness?: number; brightness_pct?: number } }>;
    const light = devices.find((d) => d.id === 'demo_kitchen_light')!;
    assert.equal(light.state.brightness, 77);
    assert.equal(light.state.brightness_pct, 30);
  });

  test('status: a short readable summary (no epoch ms, no phonemes); --json gives everything', async () => {
    const r = await cli(['--socket', socket, 'status']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.ok(lines.length < 25, `${lines.length} lines:\n${r.stdout}`);
    assert.match(r.stdout, /^HomeAgent +up \d+/m);
    assert.match(r.stdout, /^Broker +mqtt:\/\/127\.0\.0\.1:\d+ \(embedded\), connected/m);
    assert.match(r.stdout, /^Devices +5$/m);
    // Where the WebUI is (a newcomer looked for its port here).
    assert.match(r.stdout, new RegExp(`^WebUI +https on port ${app.webui.port} \\(homeagent webui link`, 'm'));
    assert.match(r.stdout, /^Plugins +\d+ of \d+ running/m);
    assert.doesNotMatch(r.stdout, /\b1\d{12}\b/, 'no epoch milliseconds');
    assert.doesNotMatch(r.stdout, /generated|"dir"/, 'no grammar internals');
    const json = JSON.parse((await cli(['--socket', socket, '--json', 'status'])).stdout) as { uptime_s: number; voice: unknown };
    assert.equal(typeof json.uptime_s, 'number');
    assert.ok(json.voice);
  });

  test('logs shows the MQTT commands sent and the errors logged', async () => {
    const got: Array<{ event: string; payload: Record<string, unknown> }> = [];
    const c = net.connect(socket, () => c.write('{"id":1,"cmd":"logs"}\n'));
    let buf = '';
    c.on('data', (d) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const l of parts) if (l) got.push((JSON.parse(l) as { data: { event: string; payload: Record<string, unknown> } }).data);
    });
    try {
      // logs listens once its request was handled: a warning it passes on proves it.
      setLogLevel('warn'); // the test runner's NODE_ENV=test silences the logs, and with them what `logs` passes on
      const probe = createLogger('test');
      await waitUntil(() => {
        probe.warn('logs probe');
        return got.some((g) => g.event === 'log' && g.payload.msg === 'logs probe');
      }, 'logs to follow');
      await request(socket, 'ask', { text: 'turn off the kitchen light' }, undefined, { timeoutMs: 30_000 });
      await waitUntil(() => got.some((g) => g.event === 'plugin.home.command'), 'the MQTT command in the logs');
      const cmd = got.find((g) => g.event === 'plugin.home.command')!;
      assert.match(String(cmd.payload.topic), /kitchen_light\/set$/);
      probe.error({ err: 'boom' }, 'something failed');
      await waitUntil(() => got.some((g) => g.event === 'log' && g.payload.msg === 'something failed'), 'the error in the logs');
      const lines: string[] = [];
      for (const g of got.filter((x) => x.event === 'plugin.home.command' || (x.event === 'log' && x.payload.msg === 'something failed'))) printResult('log', { ...g, at: new Date().toISOString() }, false, (s) => lines.push(s));
      assert.match(lines.join('\n'), /mqtt +\S+kitchen_light\/set \S*OFF/);
      assert.match(lines.join('\n'), /error +test: something failed \(boom\)/);
    } finally {
      c.destroy();
    }
  });

  test('config set of a restart-only setting says so; status says what awaits a restart and since when', async () => {
    const r = await cli(['--socket', socket, 'config', 'set', 'core.service.embedded_broker_port', '1884']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /core\.service\.embedded_broker_port is read when the service starts: the running service keeps the old value until a restart/);
    // A setting only its plugin reads at its start: restarting that plugin applies it too.
    const voice = await cli(['--socket', socket, 'config', 'set', 'plugin.voice.wake_words', 'ok_nabu']);
    assert.match(voice.stderr, /plugin\.voice\.wake_words is read when the service starts: .*until a restart \(sudo systemctl restart homeagent, or homeagent plugins restart voice\)/);
    await cli(['--socket', socket, 'config', 'delete', 'plugin.voice.wake_words']);
    const plain = await cli(['--socket', socket, 'config', 'set', 'core.agent.max_tool_rounds', '5']);
    assert.doesNotMatch(plain.stderr, /restart/, 'a live setting needs no restart');
    // A setting the environment overrides (this service has HOMEAGENT__CORE__SERVICE__DEMO_HOME): a restart would not
    // apply it either, so that alone is said (a newcomer got both notes, which contradict).
    const env = await cli(['--socket', socket, 'config', 'set', 'core.service.demo_home', 'off']);
    assert.equal(env.code, 0, env.stderr);
    assert.match(env.stderr, /overridden by the environment variable HOMEAGENT__CORE__SERVICE__DEMO_HOME/);
    assert.doesNotMatch(env.stderr, /restart/, env.stderr);
    const st = await cli(['--socket', socket, 'status']);
    assert.match(st.stdout, /^Restart +needed: core\.service\.embedded_broker_port changed at \d\d:\d\d:\d\d/m);
    assert.doesNotMatch(st.stdout, /demo_home/, 'nor does status list it as waiting for a restart');
    const bad = await cli(['--socket', socket, 'config', 'set', 'plugin.mqtt.url', 'localhost:1883']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /plugin\.mqtt\.url.*mqtt:\/\//);
    assert.match(bad.stderr, /^homeagent config set: /, 'the command as typed, not the request name "config.set"');
  });

  test("another box's own entities on the same broker are not devices", async () => {
    const client = await mqtt.connectAsync(app.brokerUrl, { clientId: 'other-box-test' });
    try {
      for (const m of boxDiscovery({ prefix: 'homeassistant', node: 'otherbox', name: 'Other HomeAgent', version: '1.0.0', topics: boxTopics('homeagent', 'otherbox') })) await client.publishAsync(m.topic, m.payload, { retain: true });
      // A real device announced after them on the same connection: once it is known, the box's messages were handled too.
      await client.publishAsync('homeassistant/switch/probe/fan_plug/config', JSON.stringify({ name: 'Fan Plug', unique_id: 'probe_fan_plug', command_topic: 'probe/fan_plug/set', state_topic: 'probe/fan_plug/state' }), { retain: true });
      await waitUntil(() => app.home.registry?.view('probe_fan_plug') !== undefined, 'the probe device discovered');
      const devices = (await request(socket, 'devices', {})) as Array<{ id: string; name: string }>;
      assert.deepEqual(devices.filter((d) => /otherbox|Stop|Assistant state|Last transcript|Volume/.test(`${d.id} ${d.name}`)), []);
    } finally {
      await client.endAsync();
    }
  });

  test('ask prints the reply; the "model unreachable" answer is in the language of the question', async () => {
    const en = await cli(['--socket', socket, 'ask', 'what', 'is', 'the', 'meaning', 'of', 'life']);
    assert.match(en.stdout, /can't reach my language model/);
    const zh = await cli(['--socket', socket, 'ask', '给我讲一个关于月亮的故事']);
    assert.match(zh.stdout, /\p{Script=Han}/u, zh.stdout);
    assert.doesNotMatch(zh.stdout, /can't reach/);
  });
});

test('ask prints each sentence as it arrives, before the reply has ended', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-ask-'));
  const socket = path.join(dir, 'homeagent.sock');
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  // A service stand-in on a real socket: the first sentence, then nothing until the test saw it printed.
  const server = net.createServer((s) => {
    s.once('data', async (d) => {
      const req = JSON.parse(d.toString()) as { id: number; cmd: string };
      assert.equal(req.cmd, 'ask');
      s.write(JSON.stringify({ id: req.id, type: 'data', data: { kind: 'sentence', content: 'The first part.' } }) + '\n');
      await released;
      s.write(JSON.stringify({ id: req.id, type: 'data', data: { kind: 'sentence', content: 'The second part.' } }) + '\n');
      s.write(JSON.stringify({ id: req.id, type: 'data', data: { kind: 'end', content: 'The first part. The second part.' } }) + '\n');
      s.write(JSON.stringify({ id: req.id, type: 'end', result: { status: 'ok', reply: 'The first part. The second part.', tools: [] } }) + '\n');
    });
  });
  await new Promise<void>((r) => server.listen(socket, r));
  try {
    let early = '';
    const r = await cli(['--socket', socket, 'ask', 'tell', 'me'], {
      onStdout: (all) => {
        if (!early && all.includes('The first part.')) {
          early = all;
          release();
        }
      },
    });
    assert.equal(early, 'The first part.', 'printed before the rest was sent');
    assert.equal(r.stdout, 'The first part. The second part.\n', 'the reply once, not again at the end');
    assert.equal(r.code, 0, r.stderr);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
