/**
 * The simulated GPIO driver: pins live in memory. Tests and the WebUI drive
 * inputs (`setLevel`, `bounce`) and read outputs (`level`, `history`). It
 * enforces the same claiming rules as the real driver (EBUSY twice, EINVAL
 * out of range) so the contract suite holds for both.
 */
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { GpioExportError, type GpioDriver, type GpioInput, type GpioOutput, type InputOptions, type Level, type OutputOptions } from './types.js';

/** Highest BCM pin on the 40-pin header plus one (Pi 4: 58 lines on the chip, header exposes 0-27). */
export const SIM_GPIO_LINES = 28;

interface SimPin {
  kind: 'in' | 'out';
  level: Level;
  listeners: Set<(l: Level) => void>;
  history: Array<{ at: number; level: Level }>;
  close(): void;
}

/** Options: `busy` BCM pins that fail with EBUSY (as if claimed by an overlay); clock for output history timestamps. */
export interface SimGpioOptions {
  busy?: readonly number[];
  clock?: Clock;
}

/** In-memory GPIO. Input levels default to 0 (released). */
export class SimGpioDriver implements GpioDriver {
  readonly kind = 'sim' as const;
  private readonly pins = new Map<number, SimPin>();
  private readonly busy: Set<number>;
  private readonly clock: Clock;

  constructor(opts: SimGpioOptions = {}) {
    this.busy = new Set(opts.busy ?? []);
    this.clock = opts.clock ?? systemClock;
  }

  private claim(bcm: number, kind: 'in' | 'out', level: Level): SimPin {
    if (!Number.isInteger(bcm) || bcm < 0 || bcm >= SIM_GPIO_LINES) throw new GpioExportError(bcm, undefined, 'EINVAL');
    if (this.busy.has(bcm) || this.pins.has(bcm)) throw new GpioExportError(bcm, undefined, 'EBUSY');
    const pin: SimPin = {
      kind,
      level,
      listeners: new Set(),
      history: [{ at: this.clock.monotonic(), level }],
      close: () => {
        pin.listeners.clear();
        if (this.pins.get(bcm) === pin) this.pins.delete(bcm);
      },
    };
    this.pins.set(bcm, pin);
    return pin;
  }

  openInput(bcm: number, _opts: InputOptions = {}): GpioInput {
    const pin = this.claim(bcm, 'in', 0);
    return {
      bcm,
      read: () => pin.level,
      onChange: (cb) => {
        pin.listeners.add(cb);
        return () => pin.listeners.delete(cb);
      },
      close: () => pin.close(),
    };
  }

  openOutput(bcm: number, opts: OutputOptions = {}): GpioOutput {
    const pin = this.claim(bcm, 'out', opts.initial ?? 0);
    let closed = false;
    return {
      bcm,
      write: (level) => {
        if (closed || pin.level === level) return;
        pin.level = level;
        pin.history.push({ at: this.clock.monotonic(), level });
      },
      read: () => pin.level,
      close: () => {
        if (closed) return;
        closed = true;
        if (pin.level !== 0) pin.history.push({ at: this.clock.monotonic(), level: 0 });
        pin.level = 0;
        pin.close();
      },
    };
  }

  /** Drive a simulated input to a logical level (fires change listeners when it changes). Throws when the pin is not an open input. */
  setLevel(bcm: number, level: Level): void {
    const pin = this.pins.get(bcm);
    if (!pin || pin.kind !== 'in') throw new Error(`sim gpio: BCM ${bcm} is not an open input`);
    if (pin.level === level) return;
    pin.level = level;
    for (const cb of [...pin.listeners]) cb(level);
  }

  /** Simulate contact bounce: apply each level in turn (synchronously). */
  bounce(bcm: number, levels: readonly Level[]): void {
    for (const l of levels) this.setLevel(bcm, l);
  }

  /** Current logical level of an open pin, or undefined when it is not open. */
  level(bcm: number): Level | undefined {
    return this.pins.get(bcm)?.level;
  }

  /** Output level changes with timestamps (ms, the clock's monotonic time). */
  history(bcm: number): ReadonlyArray<{ at: number; level: Level }> {
    return this.pins.get(bcm)?.history ?? [];
  }

  /** BCM pins currently open. */
  openPins(): number[] {
    return [...this.pins.keys()].sort((a, b) => a - b);
  }

  close(): void {
    for (const p of [...this.pins.values()]) p.close();
  }
}
