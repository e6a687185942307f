/**
 * Button debounce and long-press, and status LEDs, on the simulated driver with
 * a fake clock (no sleeping, no elapsed-time assertions).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { Button } from '../../hal/gpio/button.js';
import { GpioLeds } from '../../hal/gpio/leds.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';

function setup(debounceMs = 30, longPressMs = 1500) {
  const clock = new FakeClock(1000);
  const gpio = new SimGpioDriver({ clock });
  const input = gpio.openInput(17);
  const button = new Button(input, { debounceMs, longPressMs, clock });
  const events: string[] = [];
  button.on('press', (e) => events.push(`press@${e.at}`));
  button.on('release', (e) => events.push(`release@${e.at} held=${e.heldMs} long=${e.long}`));
  button.on('long_press', (e) => events.push(`long@${e.at} held=${e.heldMs}`));
  return { clock, gpio, button, events };
}

describe('Button', () => {
  it('contact bounce produces one press after the level holds for debounce_ms', () => {
    const { clock, gpio, events } = setup();
    gpio.bounce(17, [1, 0, 1, 0, 1]);
    clock.advance(10);
    gpio.bounce(17, [0, 1]);
    clock.advance(29);
    assert.deepEqual(events, []);
    clock.advance(1);
    assert.deepEqual(events, ['press@1040']);
    gpio.bounce(17, [0, 1, 0]);
    clock.advance(100);
    assert.deepEqual(events, ['press@1040', 'release@1070 held=30 long=false']);
  });

  it('a glitch shorter than debounce_ms is ignored', () => {
    const { clock, gpio, events } = setup();
    gpio.setLevel(17, 1);
    clock.advance(5);
    gpio.setLevel(17, 0);
    clock.advance(100);
    assert.deepEqual(events, []);
  });

  it('holding past long_press_ms emits long_press once, while held, then release says long', () => {
    const { clock, gpio, events, button } = setup(20, 1500);
    gpio.setLevel(17, 1);
    clock.advance(20);
    assert.equal(button.pressed, true);
    clock.advance(1499);
    assert.deepEqual(events, ['press@1020']);
    clock.advance(1);
    assert.deepEqual(events, ['press@1020', 'long@2520 held=1500']);
    clock.advance(3000);
    gpio.setLevel(17, 0);
    clock.advance(20);
    assert.deepEqual(events, ['press@1020', 'long@2520 held=1500', 'release@5540 held=4520 long=true']);
  });

  it('debounce 0 reacts at once; long-press 0 disables long presses', () => {
    const { clock, gpio, events } = setup(0, 0);
    gpio.setLevel(17, 1);
    assert.deepEqual(events, ['press@1000']);
    clock.advance(10_000);
    gpio.setLevel(17, 0);
    assert.deepEqual(events, ['press@1000', 'release@11000 held=10000 long=false']);
    assert.equal(clock.pending, 0);
  });

  it('close() cancels pending timers and stops listening', () => {
    const { clock, gpio, events, button } = setup();
    gpio.setLevel(17, 1);
    button.close();
    clock.advance(5000);
    gpio.setLevel(17, 0);
    assert.deepEqual(events, []);
    assert.equal(clock.pending, 0);
  });
});

describe('GpioLeds', () => {
  it('an RGB LED shows each state; thinking blinks on the clock', () => {
    const clock = new FakeClock();
    const gpio = new SimGpioDriver({ clock });
    const leds = new GpioLeds(gpio, { pins: { red: 22, green: 23, blue: 24 }, clock });
    const lit = () => ({ r: gpio.level(22), g: gpio.level(23), b: gpio.level(24) });
    assert.deepEqual(lit(), { r: 0, g: 0, b: 0 });
    leds.show('listening');
    assert.deepEqual(lit(), { r: 0, g: 0, b: 1 });
    leds.show('speaking');
    assert.deepEqual(lit(), { r: 0, g: 1, b: 0 });
    leds.show('thinking');
    assert.deepEqual(lit(), { r: 0, g: 1, b: 1 });
    clock.advance(300);
    assert.deepEqual(lit(), { r: 0, g: 0, b: 0 });
    clock.advance(300);
    assert.deepEqual(lit(), { r: 0, g: 1, b: 1 });
    leds.show('error');
    assert.deepEqual(lit(), { r: 1, g: 0, b: 0 });
    leds.show('idle');
    assert.deepEqual(lit(), { r: 0, g: 0, b: 0 });
    assert.equal(clock.pending, 0);
    leds.close();
    assert.deepEqual(gpio.openPins(), []);
  });

  it('a single LED lights for every non-idle state', () => {
    const gpio = new SimGpioDriver();
    const leds = new GpioLeds(gpio, { pins: { status: 5 }, patterns: { thinking: { on: ['status'] } } });
    for (const s of ['listening', 'thinking', 'speaking'] as const) {
      leds.show(s);
      assert.equal(gpio.level(5), 1, s);
    }
    leds.show('idle');
    assert.equal(gpio.level(5), 0);
    leds.close();
  });

  it('a pin that cannot be claimed releases the ones already opened', () => {
    const gpio = new SimGpioDriver({ busy: [23] });
    assert.throws(() => new GpioLeds(gpio, { pins: { red: 22, green: 23 } }), /EBUSY/);
    assert.deepEqual(gpio.openPins(), []);
  });
});
