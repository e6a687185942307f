/**
 * Status LEDs: show the assistant state (src/kernel/assistant-state.ts: idle,
 * listening, thinking, speaking, waiting_for_answer, muted, error) on one or
 * more GPIO LEDs. Each state maps to a pattern: which named LEDs are lit and
 * an optional blink period. A pattern naming no LED that is wired falls back
 * to "all wired LEDs", so a single LED still works.
 */
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import type { AssistantState } from '../../src/kernel/assistant-state.js';
import type { GpioDriver, GpioOutput } from './types.js';

/** What one state looks like: LED names lit, and a blink half-period in ms (0/absent = steady). */
export interface LedPattern {
  on: string[];
  blink_ms?: number;
}

/** Default patterns for an RGB LED wired as `red`, `green`, `blue` (names are free). */
export const DEFAULT_LED_PATTERNS: Record<AssistantState, LedPattern> = {
  idle: { on: [] },
  listening: { on: ['blue'] },
  thinking: { on: ['blue', 'green'], blink_ms: 300 },
  speaking: { on: ['green'] },
  /** Listening for a yes/no: the listening colour, blinking slowly. */
  waiting_for_answer: { on: ['blue'], blink_ms: 600 },
  /** Microphone off: steady red (as on most voice assistants). */
  muted: { on: ['red'] },
  error: { on: ['red'], blink_ms: 150 },
};

/** Anything that can show the assistant state (GPIO LEDs, an LED ring over serial). */
export interface StatusIndicator {
  show(state: AssistantState): void;
  readonly state: AssistantState;
  close(): void;
}

/** Options: LED name -> BCM pin, patterns per state (merged over the defaults), active-low wiring, clock. */
export interface GpioLedsOptions {
  pins: Record<string, number>;
  patterns?: Partial<Record<AssistantState, LedPattern>>;
  activeLow?: boolean;
  clock?: Clock;
}

/** LEDs on GPIO outputs. Opening throws `GpioExportError` for a pin that cannot be claimed (already-opened pins are released first). */
export class GpioLeds implements StatusIndicator {
  private readonly outputs = new Map<string, GpioOutput>();
  private readonly patterns: Record<AssistantState, LedPattern>;
  private readonly clock: Clock;
  private blinkTimer: TimerHandle | undefined;
  private current: AssistantState = 'idle';

  constructor(driver: GpioDriver, opts: GpioLedsOptions) {
    this.clock = opts.clock ?? systemClock;
    this.patterns = { ...DEFAULT_LED_PATTERNS, ...(opts.patterns ?? {}) };
    try {
      for (const [name, bcm] of Object.entries(opts.pins)) {
        this.outputs.set(name, driver.openOutput(bcm, { activeLow: opts.activeLow ?? false, initial: 0 }));
      }
    } catch (err) {
      for (const o of this.outputs.values()) o.close();
      throw err;
    }
    this.show('idle');
  }

  get state(): AssistantState {
    return this.current;
  }

  /** LED names lit (steady part) for `state`. */
  litFor(state: AssistantState): string[] {
    const names = this.patterns[state].on.filter((n) => this.outputs.has(n));
    if (names.length === 0 && this.patterns[state].on.length > 0) return [...this.outputs.keys()];
    return names;
  }

  show(state: AssistantState): void {
    this.current = state;
    this.clock.clearTimeout(this.blinkTimer);
    this.blinkTimer = undefined;
    const lit = new Set(this.litFor(state));
    const apply = (on: boolean) => {
      for (const [name, out] of this.outputs) out.write(on && lit.has(name) ? 1 : 0);
    };
    apply(true);
    const period = this.patterns[state].blink_ms ?? 0;
    if (period > 0 && lit.size > 0) {
      let on = true;
      const step = () => {
        on = !on;
        apply(on);
        this.blinkTimer = this.clock.setTimeout(step, period, { keepAlive: true });
      };
      this.blinkTimer = this.clock.setTimeout(step, period, { keepAlive: true });
    }
  }

  /** Turn everything off and release the pins. */
  close(): void {
    this.clock.clearTimeout(this.blinkTimer);
    this.blinkTimer = undefined;
    for (const o of this.outputs.values()) o.close();
    this.outputs.clear();
  }
}
