/**
 * The box itself in Home Assistant: discovery of the stop button, the
 * assistant-state and last-transcript sensors and the volume number, their
 * topics working both ways, availability (birth, last will on an unclean
 * disconnect, offline on stop), and a client id that is unique per box and
 * kept across restarts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { HomePlugin } from '../../src/home/index.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { waitFor } from './harness.js';
import { stubMatcher } from './stub-matcher.js';

describe('the box in Home Assistant', () => {
  let broker: MosquittoBroker;
  let probe: MqttClient;
  const seen = new Map<string, string>();
  const sdk = new FakeSdk();
  let plugin: HomePlugin;
  let node = '';

  before(async () => {
    broker = await startMosquitto();
    probe = await mqtt.connectAsync(broker.url, { clientId: 'box-probe' });
    probe.on('message', (t, p) => seen.set(t, p.toString('utf8')));
    await probe.subscribeAsync(['homeassistant/#', 'homeagent/#'], { qos: 1 });
    sdk.settingsApi.preset('plugin.mqtt.url', broker.url);
    sdk.settingsApi.register({ key: 'plugin.speaker.volume', type: 'integer', default: 60, description: 'speaker volume (registered by the speaker plugin)' });
    plugin = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 } });
    await plugin.start(sdk);
    node = readFileSync(path.join(sdk.dataDir, 'home', 'box-id'), 'utf8').trim();
    await waitFor(() => seen.get(`homeagent/${node}/availability`) === 'online', 'birth message');
  });
  after(async () => {
    await plugin.stop();
    await probe.endAsync();
    await broker.stop();
    sdk.cleanup();
  });

  test('discovery announces button, sensors and number with the availability topic', async () => {
    const configs = ['button', 'sensor', 'sensor', 'number'];
    await waitFor(() => [...seen.keys()].filter((t) => t.startsWith('homeassistant/') && t.includes(`/${node}/`)).length === 4, 'four configs');
    const found = [...seen.entries()].filter(([t]) => t.startsWith('homeassistant/') && t.includes(`/${node}/`));
    assert.deepEqual(found.map(([t]) => t.split('/')[1]).sort(), [...configs].sort());
    for (const [, p] of found) {
      const cfg = JSON.parse(p) as Record<string, unknown>;
      assert.equal(cfg.availability_topic, `homeagent/${node}/availability`);
      assert.ok(typeof cfg.unique_id === 'string' && (cfg.unique_id as string).startsWith(node));
    }
    assert.equal(plugin.registry?.entities().length, 0, "the box's own entities are not devices of the home");
    assert.equal(seen.get(`homeagent/${node}/volume`), '60');
  });

  test('stop button, volume, assistant state and last transcript', async () => {
    await probe.publishAsync(`homeagent/${node}/stop/press`, 'PRESS', { qos: 1 });
    await waitFor(() => sdk.stops.includes('homeassistant'), 'stop called');
    await probe.publishAsync(`homeagent/${node}/volume/set`, '35', { qos: 1 });
    await waitFor(() => sdk.settingsApi.get('plugin.speaker.volume') === 35, 'volume set');
    await waitFor(() => seen.get(`homeagent/${node}/volume`) === '35', 'volume state');
    // Anything but a plain number 0-100 is ignored: an empty payload (clearing a retained message) muted the box, "0x32"
    // set 50 (a tester's). The broker delivers in order, so once 36 has arrived the payloads before it were handled.
    const volumes: unknown[] = [];
    const off = sdk.settingsApi.onChange('plugin.speaker.volume', (_k, v) => volumes.push(v));
    for (const junk of ['loud', '', ' ', '0x32', '-5', '101', '1e2', '50abc']) await probe.publishAsync(`homeagent/${node}/volume/set`, junk, { qos: 1 });
    await probe.publishAsync(`homeagent/${node}/volume/set`, '36', { qos: 1 });
    await waitFor(() => sdk.settingsApi.get('plugin.speaker.volume') === 36, 'volume set again');
    off();
    assert.deepEqual(volumes, [36], 'only the plain number changed the volume');
    sdk.settingsApi.set('plugin.speaker.volume', 42);
    await waitFor(() => seen.get(`homeagent/${node}/volume`) === '42', 'volume follows the setting');
    sdk.publish('assistant_state', { state: 'thinking' });
    await waitFor(() => seen.get(`homeagent/${node}/assistant_state`) === 'thinking', 'assistant state');
    await sdk.runInput('what is the meaning of life');
    await waitFor(() => seen.get(`homeagent/${node}/last_transcript`) === 'what is the meaning of life', 'transcript');
  });

  test('the last will marks the box offline on an unclean disconnect, and it comes back', async () => {
    // Taking over the box's client id makes the broker drop the box's connection uncleanly.
    const intruder = await mqtt.connectAsync(broker.url, { clientId: node, reconnectPeriod: 0 });
    await waitFor(() => seen.get(`homeagent/${node}/availability`) === 'offline', 'last will');
    await intruder.endAsync(true);
    await waitFor(() => seen.get(`homeagent/${node}/availability`) === 'online' && plugin.connected, 'back online');
  });

  test('the client id is generated once per box and kept; another box gets another', async () => {
    const again = new FakeSdk({ dataDir: sdk.dataDir });
    const other = new FakeSdk();
    for (const s of [again, other]) s.settingsApi.preset('plugin.mqtt.url', 'mqtt://127.0.0.1:1');
    const a = new HomePlugin({ matchIntent: stubMatcher });
    const b = new HomePlugin({ matchIntent: stubMatcher });
    await a.start(again);
    await b.start(other);
    try {
      assert.equal(readFileSync(path.join(again.dataDir, 'home', 'box-id'), 'utf8').trim(), node);
      const otherId = readFileSync(path.join(other.dataDir, 'home', 'box-id'), 'utf8').trim();
      assert.notEqual(otherId, node);
      assert.match(otherId, /^homeagent_[0-9a-f]{12}$/);
    } finally {
      await a.stop();
      await b.stop();
      other.cleanup();
    }
  });

  test('stopping publishes offline', async () => {
    await plugin.stop();
    await waitFor(() => seen.get(`homeagent/${node}/availability`) === 'offline', 'offline on stop');
  });
});
