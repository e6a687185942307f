/**
 * GPIO contract suite: every GpioDriver (simulator, onoff on a fake kernel,
 * onoff on a Pi) must pass it. The harness says which pins to use and how to
 * drive the input pin (the simulator sets it; on a Pi a wire loops an output
 * pin back to the input pin).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Button } from '../../../hal/gpio/button.js';
import { GpioExportError, type GpioDriver, type Level } from '../../../hal/gpio/types.js';

/** What a contract run needs: a fresh driver, an input pin it can drive, a free output pin. */
export interface GpioHarness {
  driver: GpioDriver;
  inputPin: number;
  outputPin: number;
  /** Drive `inputPin` to a logical level; resolves once the level is applied. */
  stimulate(level: Level): Promise<void>;
  cleanup(): Promise<void>;
}

function waitFor<T>(register: (resolve: (v: T) => void) => void, ms = 30_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms);
    register((v) => {
      clearTimeout(t);
      resolve(v);
    });
  });
}

/** Register the GPIO contract for one implementation. */
export function gpioContract(name: string, factory: () => Promise<GpioHarness>): void {
  describe(`GpioDriver contract: ${name}`, () => {
    async function withHarness(fn: (h: GpioHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        h.driver.close();
        await h.cleanup();
      }
    }

    it('drives an output and reads it back; close releases the pin', () =>
      withHarness(async (h) => {
        const out = h.driver.openOutput(h.outputPin, { initial: 0 });
        assert.equal(out.read(), 0);
        out.write(1);
        assert.equal(out.read(), 1);
        out.write(0);
        assert.equal(out.read(), 0);
        out.close();
        out.close();
        const again = h.driver.openOutput(h.outputPin, { initial: 1 });
        assert.equal(again.read(), 1);
        again.close();
      }));

    it('reports both edges of an input', () =>
      withHarness(async (h) => {
        const input = h.driver.openInput(h.inputPin);
        await h.stimulate(0);
        const seen: Level[] = [];
        const off = input.onChange((l) => seen.push(l));
        const rising = waitFor<Level>((r) => input.onChange((l) => l === 1 && r(l)));
        await h.stimulate(1);
        assert.equal(await rising, 1);
        assert.equal(input.read(), 1);
        const falling = waitFor<Level>((r) => input.onChange((l) => l === 0 && r(l)));
        await h.stimulate(0);
        assert.equal(await falling, 0);
        assert.equal(input.read(), 0);
        off();
        assert.deepEqual(seen.slice(-2), [1, 0]);
        input.close();
      }));

    it('a Button on the driver emits press and release', () =>
      withHarness(async (h) => {
        const input = h.driver.openInput(h.inputPin);
        await h.stimulate(0);
        const button = new Button(input, { debounceMs: 0, longPressMs: 0 });
        const press = waitFor<{ at: number }>((r) => button.once('press', r));
        await h.stimulate(1);
        await press;
        assert.equal(button.pressed, true);
        const release = waitFor<{ heldMs: number; long: boolean }>((r) => button.once('release', r));
        await h.stimulate(0);
        const rel = await release;
        assert.equal(rel.long, false);
        assert.ok(rel.heldMs >= 0);
        button.close();
        input.close();
      }));

    it('a pin claimed twice fails with GpioExportError EBUSY naming the pin', () =>
      withHarness(async (h) => {
        const out = h.driver.openOutput(h.outputPin);
        assert.throws(
          () => h.driver.openInput(h.outputPin),
          (err: unknown) => err instanceof GpioExportError && err.code === 'GPIO_EXPORT' && err.errno === 'EBUSY' && err.message.includes(`BCM ${h.outputPin}`),
        );
        out.close();
      }));

    it('a BCM pin outside the header fails with GpioExportError EINVAL', () =>
      withHarness(async (h) => {
        assert.throws(
          () => h.driver.openOutput(99),
          (err: unknown) => err instanceof GpioExportError && err.code === 'GPIO_EXPORT' && err.errno === 'EINVAL' && err.message.includes('BCM 99'),
        );
      }));

    it('close() releases every pin the driver opened', () =>
      withHarness(async (h) => {
        h.driver.openOutput(h.outputPin);
        h.driver.openInput(h.inputPin);
        h.driver.close();
        const out = h.driver.openOutput(h.outputPin);
        const input = h.driver.openInput(h.inputPin);
        out.close();
        input.close();
      }));
  });
}
