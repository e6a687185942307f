/**
 * Status LEDs and the assistant states (src/kernel/assistant-state.ts): every
 * state has a pattern; patterns a user configured before waiting_for_answer
 * and muted existed keep working (waiting_for_answer looks like their
 * listening pattern); the LEDs show the newer states.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { ASSISTANT_STATES } from '../../src/kernel/assistant-state.js';
import { GpioPlugin } from '../../hal/gpio/plugin.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';
import { DEFAULT_LED_PATTERNS } from '../../hal/gpio/leds.js';
import { parsePatterns } from '../../hal/gpio/config.js';
import { FakeSdk } from '../support/fake-sdk.js';

describe('LED patterns per assistant state', () => {
  it('every state has a default pattern', () => {
    assert.deepEqual(Object.keys(DEFAULT_LED_PATTERNS).sort(), [...ASSISTANT_STATES].sort());
  });

  it('a setting written for the first five states keeps them; waiting_for_answer looks like its listening, muted gets its default', () => {
    const old = { idle: { on: [] }, listening: { on: ['status'], blink_ms: 100 }, thinking: { on: ['status'], blink_ms: 400 }, speaking: { on: ['status'] }, error: { on: ['status'], blink_ms: 50 } };
    const p = parsePatterns(old);
    assert.deepEqual(p.listening, { on: ['status'], blink_ms: 100 });
    assert.deepEqual(p.waiting_for_answer, { on: ['status'], blink_ms: 100 });
    assert.deepEqual(p.muted, DEFAULT_LED_PATTERNS.muted);
    assert.deepEqual(p.error, { on: ['status'], blink_ms: 50 });
  });

  it('an explicit waiting_for_answer pattern wins; no setting means the defaults', () => {
    assert.deepEqual(parsePatterns({ listening: { on: ['blue'] }, waiting_for_answer: { on: ['green'] } }).waiting_for_answer, { on: ['green'], blink_ms: undefined });
    assert.deepEqual(parsePatterns(undefined), DEFAULT_LED_PATTERNS);
  });

  it('the LEDs show waiting_for_answer (blinking) and muted', async () => {
    const clock = new FakeClock();
    const gpio = new SimGpioDriver({ clock });
    const plugin = new GpioPlugin({ driver: gpio, clock });
    const sdk = new FakeSdk({ name: 'gpio', settings: { 'plugin.gpio.led_pins': { red: 22, green: 23, blue: 24 } } });
    await plugin.start(sdk);
    sdk.publish('assistant_state', { state: 'waiting_for_answer' });
    assert.deepEqual([gpio.level(22), gpio.level(23), gpio.level(24)], [0, 0, 1]);
    clock.advance(DEFAULT_LED_PATTERNS.waiting_for_answer.blink_ms!);
    assert.equal(gpio.level(24), 0, 'blinks');
    clock.advance(DEFAULT_LED_PATTERNS.waiting_for_answer.blink_ms!);
    assert.equal(gpio.level(24), 1);
    sdk.publish('assistant_state', { state: 'muted' });
    assert.deepEqual([gpio.level(22), gpio.level(23), gpio.level(24)], [1, 0, 0]);
    clock.advance(5000);
    assert.equal(gpio.level(22), 1, 'steady');
    assert.equal(plugin.ledState, 'muted');
    await plugin.stop();
  });
});
