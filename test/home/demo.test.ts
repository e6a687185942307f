/**
 * The demo home of simulated mode: announced on a broker, discovered by the
 * plugin, and "turn on the kitchen light" works at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DemoHomeSimulator, HomePlugin } from '../../src/home/index.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { waitFor } from './harness.js';

describe('demo home', () => {
  let broker: MosquittoBroker;
  let demo: DemoHomeSimulator;
  const sdk = new FakeSdk();
  const plugin = new HomePlugin({ mqtt: { reconnectMinMs: 100 } });

  before(async () => {
    broker = await startMosquitto();
    demo = new DemoHomeSimulator({ url: broker.url });
    await demo.start();
    sdk.settingsApi.preset('plugin.mqtt.url', broker.url);
    await plugin.start(sdk);
    await waitFor(() => (plugin.registry?.entities().length ?? 0) === 5 && plugin.registry?.view('demo_kitchen_light')?.available === true, 'demo home discovered');
  });
  after(async () => {
    await plugin.stop();
    await demo.stop();
    await broker.stop();
    sdk.cleanup();
  });

  test('the demo devices, rooms and states', () => {
    const reg = plugin.registry;
    assert.ok(reg);
    assert.deepEqual(reg.entities().map((e) => [e.name, e.component, e.area]).sort(), [
      ['Bedroom Temperature', 'sensor', 'Bedroom'],
      ['Front Door', 'lock', 'Hallway'],
      ['Kitchen Light', 'light', 'Kitchen'],
      ['Living Room Lamp', 'light', 'Living Room'],
      ['Thermostat', 'climate', 'Living Room'],
    ]);
    assert.equal(reg.view('demo_bedroom_temperature')?.state.state, '19.5');
  });

  test('turn on the kitchen light, dim the lamp, set the thermostat', async () => {
    assert.equal((await sdk.runInput('turn on the kitchen light')).response, 'Turned on the Kitchen Light.');
    await waitFor(() => plugin.registry?.view('demo_kitchen_light')?.state.state === 'on', 'the demo light answered');
    await sdk.runInput('set the living room lamp to 50 percent');
    await waitFor(() => plugin.registry?.view('demo_living_room_lamp')?.state.state === 'on' && plugin.registry?.view('demo_living_room_lamp')?.state.brightness === 128, 'lamp dimmed');
    await sdk.runInput('set the thermostat to 23 degrees');
    await waitFor(() => plugin.registry?.view('demo_thermostat')?.state.target_temperature === 23, 'thermostat set');
    assert.match((await sdk.runInput("what's the temperature in the bedroom")).response ?? '', /19\.5/);
  });
});
