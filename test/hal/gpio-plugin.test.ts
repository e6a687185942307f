/**
 * GpioPlugin with a fake SDK and the simulated driver: stop button -> sdk.stop,
 * push-to-talk -> plugin.gpio.ptt, long-press actions, LEDs following
 * assistant_state, export errors at startup, settings registration.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { GpioPlugin } from '../../hal/gpio/plugin.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';
import { GpioExportError } from '../../hal/gpio/types.js';
import { FakeSdk } from '../support/fake-sdk.js';

function setup(settings: Record<string, unknown> = {}, busy: number[] = []) {
  const clock = new FakeClock();
  const gpio = new SimGpioDriver({ clock, busy });
  const plugin = new GpioPlugin({ driver: gpio, clock });
  const sdk = new FakeSdk({ name: 'gpio', settings: { 'plugin.gpio.ptt_pin': 27, ...settings } });
  return { clock, gpio, plugin, sdk };
}

describe('GpioPlugin', () => {
  it('is kernel-level and registers its settings under plugin.gpio.*', async () => {
    const { plugin, sdk } = setup();
    assert.equal(plugin.kernelLevel, true);
    await plugin.start(sdk);
    const keys = sdk.settingsApi.list('plugin.gpio.').map((s) => s.key);
    assert.ok(keys.includes('plugin.gpio.stop_pin'));
    assert.ok(keys.includes('plugin.gpio.long_press_actions'));
    assert.ok(keys.every((k) => k.startsWith('plugin.gpio.')));
    await plugin.stop();
  });

  it('the stop button calls sdk.stop("button") after debounce', async () => {
    const { clock, gpio, plugin, sdk } = setup();
    await plugin.start(sdk);
    gpio.bounce(17, [1, 0, 1]);
    assert.deepEqual(sdk.stops, []);
    clock.advance(30);
    assert.deepEqual(sdk.stops, ['button']);
    gpio.setLevel(17, 0);
    clock.advance(30);
    assert.deepEqual(sdk.events('plugin.gpio.button'), [
      { button: 'stop', action: 'press', held_ms: 0 },
      { button: 'stop', action: 'release', held_ms: 30 },
    ]);
    await plugin.stop();
  });

  it('push-to-talk publishes plugin.gpio.ptt pressed true then false', async () => {
    const { clock, gpio, plugin, sdk } = setup();
    await plugin.start(sdk);
    gpio.setLevel(27, 1);
    clock.advance(30);
    clock.advance(400);
    gpio.setLevel(27, 0);
    clock.advance(30);
    assert.deepEqual(sdk.events('plugin.gpio.ptt'), [{ pressed: true }, { pressed: false, held_ms: 430 }]);
    assert.deepEqual(sdk.stops, []);
    await plugin.stop();
  });

  it('long-press actions: input text on ptt, bus event on stop', async () => {
    const { clock, gpio, plugin, sdk } = setup({
      'plugin.gpio.long_press_ms': 1000,
      'plugin.gpio.long_press_actions': { ptt: { type: 'input', text: 'good night' }, stop: { type: 'event', name: 'plugin.gpio.mute' } },
    });
    await plugin.start(sdk);
    gpio.setLevel(27, 1);
    clock.advance(1030);
    assert.deepEqual(sdk.inputs.map((i) => [i.channel, i.text]), [['speaker', 'good night']]);
    gpio.setLevel(27, 0);
    clock.advance(30);
    gpio.setLevel(17, 1);
    clock.advance(1030);
    assert.deepEqual(sdk.events('plugin.gpio.mute'), [{ button: 'stop', held_ms: 1000 }]);
    assert.deepEqual(sdk.stops, ['button']);
    await plugin.stop();
  });

  it('LEDs follow assistant_state events', async () => {
    const { gpio, plugin, sdk } = setup({ 'plugin.gpio.led_pins': { red: 22, green: 23, blue: 24 } });
    await plugin.start(sdk);
    sdk.publish('assistant_state', { state: 'listening' });
    assert.equal(gpio.level(24), 1);
    assert.equal(plugin.ledState, 'listening');
    sdk.publish('assistant_state', { state: 'speaking' });
    assert.deepEqual([gpio.level(22), gpio.level(23), gpio.level(24)], [0, 1, 0]);
    await plugin.stop();
    assert.deepEqual(gpio.openPins(), []);
    assert.equal(sdk.subscriptionCount(), 0);
  });

  it('a busy pin makes start reject with GpioExportError and leaves nothing open', async () => {
    const { gpio, plugin, sdk } = setup({ 'plugin.gpio.led_pins': { red: 22 } }, [22]);
    await assert.rejects(plugin.start(sdk), (e: unknown) => e instanceof GpioExportError && e.errno === 'EBUSY' && e.message.includes('BCM 22'));
    assert.deepEqual(gpio.openPins(), []);
  });

  it('changing plugin.gpio.stop_pin re-opens the pins', async () => {
    const { clock, gpio, plugin, sdk } = setup();
    await plugin.start(sdk);
    sdk.settingsApi.set('plugin.gpio.stop_pin', 5);
    assert.deepEqual(gpio.openPins(), [5, 27]);
    gpio.setLevel(5, 1);
    clock.advance(30);
    assert.deepEqual(sdk.stops, ['button']);
    await plugin.stop();
  });

  it('invalid long-press settings are a typed config error', async () => {
    const { plugin, sdk } = setup({ 'plugin.gpio.long_press_actions': { stop: { type: 'reboot' } } });
    await assert.rejects(plugin.start(sdk), (e: unknown) => e instanceof Error && 'code' in e && e.code === 'HAL_BAD_CONFIG');
  });

  it("'auto' without sysfs GPIO picks the simulator, logs why, and simulated presses reach the one button (idle: listen; speaking: sdk.stop)", async () => {
    const clock = new FakeClock();
    const plugin = new GpioPlugin({ clock });
    const sdk = new FakeSdk({ name: 'gpio', settings: { 'plugin.gpio.sysfs_root': '/nonexistent-sysfs' } });
    await plugin.start(sdk);
    assert.ok(plugin.gpio instanceof SimGpioDriver);
    assert.ok(sdk.log.messages('warn').some((m) => /gpio: no hardware .*falling back to the simulator/.test(m)));
    plugin.simulateButton('stop', 1);
    clock.advance(30);
    assert.deepEqual(sdk.events('plugin.voice.listen'), [{ action: 'start', source: 'button' }]);
    plugin.simulateButton('stop', 0);
    clock.advance(30);
    sdk.publish('assistant_state', { state: 'speaking' });
    plugin.simulateButton('stop', 1);
    clock.advance(30);
    assert.deepEqual(sdk.stops, ['button']);
    assert.throws(() => plugin.simulateButton('ptt', 1), (e: unknown) => e instanceof Error && 'code' in e && e.code === 'HAL_BAD_CONFIG');
    await plugin.stop();
  });
});
