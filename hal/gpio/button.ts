/**
 * A debounced push button on a `GpioInput`, watching both edges: emits
 * `press`, `release` (with how long it was held) and `long_press` (once, while
 * still held, after `longPressMs`). Debounce = a level must hold for
 * `debounceMs` before it counts (contact bounce of tactile switches settles in
 * 5-20 ms). All timing goes through an injectable `Clock`.
 */
import { EventEmitter } from 'node:events';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import type { GpioInput, Level } from './types.js';

/** Button timing: `debounceMs` (default 30 ms), `longPressMs` (default 1500 ms; 0 disables long-press). */
export interface ButtonOptions {
  debounceMs?: number;
  longPressMs?: number;
  clock?: Clock;
}

/** Events of a `Button`; `at` is the clock's monotonic time in ms, `heldMs` the press duration in ms. */
export interface ButtonEvents {
  press: [{ at: number }];
  release: [{ at: number; heldMs: number; long: boolean }];
  long_press: [{ at: number; heldMs: number }];
}

/** A debounced button. Call `close()` to stop watching (it does not close the pin). */
export class Button extends EventEmitter<ButtonEvents> {
  private stable: Level;
  private raw: Level;
  private settleTimer: TimerHandle | undefined;
  private longTimer: TimerHandle | undefined;
  private pressedAt = 0;
  private long = false;
  private readonly unsubscribe: () => void;
  private readonly clock: Clock;
  private readonly debounceMs: number;
  private readonly longPressMs: number;

  constructor(private readonly input: GpioInput, opts: ButtonOptions = {}) {
    super();
    this.clock = opts.clock ?? systemClock;
    this.debounceMs = opts.debounceMs ?? 30;
    this.longPressMs = opts.longPressMs ?? 1500;
    this.stable = input.read();
    this.raw = this.stable;
    this.unsubscribe = input.onChange((l) => this.onRaw(l));
  }

  /** BCM pin of the button. */
  get bcm(): number {
    return this.input.bcm;
  }

  /** True while the (debounced) button is held. */
  get pressed(): boolean {
    return this.stable === 1;
  }

  private onRaw(level: Level): void {
    this.raw = level;
    if (this.debounceMs <= 0) {
      this.settle();
      return;
    }
    this.clock.clearTimeout(this.settleTimer);
    this.settleTimer = this.clock.setTimeout(() => this.settle(), this.debounceMs, { keepAlive: true });
  }

  private settle(): void {
    this.settleTimer = undefined;
    if (this.raw === this.stable) return;
    this.stable = this.raw;
    const at = this.clock.monotonic();
    if (this.stable === 1) {
      this.pressedAt = at;
      this.long = false;
      this.emit('press', { at });
      if (this.longPressMs > 0) {
        this.longTimer = this.clock.setTimeout(() => {
          this.longTimer = undefined;
          this.long = true;
          const now = this.clock.monotonic();
          this.emit('long_press', { at: now, heldMs: now - this.pressedAt });
        }, this.longPressMs, { keepAlive: true });
      }
    } else {
      this.clock.clearTimeout(this.longTimer);
      this.longTimer = undefined;
      this.emit('release', { at, heldMs: at - this.pressedAt, long: this.long });
    }
  }

  /** Stop listening and cancel pending timers. */
  close(): void {
    this.unsubscribe();
    this.clock.clearTimeout(this.settleTimer);
    this.clock.clearTimeout(this.longTimer);
    this.settleTimer = undefined;
    this.longTimer = undefined;
    this.removeAllListeners();
  }
}
