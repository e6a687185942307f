/**
 * MemoryPlugin: the memory's heartbeat loops (seed 001 "Three-Layer Memory"
 * ④ distill / archive and ⑤ merge / review, plus the rule distiller) as a
 * plugin under the plugin host's guard, like every other thing the service
 * runs. `start` arms one timer per loop, `stop` disarms them and waits for a
 * tick in progress; the host bounds both with its start/stop time limit.
 *
 * Each loop runs on its own timer whose interval (minutes) is re-read from
 * its setting after every tick, so a change applies from the next tick. Each
 * tick runs in a guard: an error (thrown or rejected) is logged and the loop
 * goes on; a tick that does not settle within `tickTimeoutMs` is logged and
 * the loop is re-armed without waiting for it. No loop can stop another loop
 * or another plugin.
 */
import type { Logger } from '../kernel/log-types.js';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import { systemClock, type Clock, type TimerHandle } from '../kernel/clock.js';
import { HomeAgentError, errorMessage } from '../kernel/errors.js';
import { LOOP_SETTINGS, type LoopName } from './memory-system.js';
import { numberSetting } from './settings.js';

/** What the plugin drives: one tick of a loop (MemorySystem.runLoopOnce). */
export interface MemoryLoops {
  /** Run one tick of `name` now; resolves with counts of what it did. */
  runLoopOnce(name: LoopName): Promise<Record<string, number>>;
}

/** Constructor options. */
export interface MemoryPluginOptions {
  /** The loops to run (the service's MemorySystem). */
  loops: MemoryLoops;
  /** Timer source (tests: FakeClock). Default: the system clock. */
  clock?: Clock;
  /** Time limit of one tick, ms (default 60 000). */
  tickTimeoutMs?: number;
}

/** Every loop the plugin runs, in start order. */
export const LOOP_NAMES: readonly LoopName[] = Object.keys(LOOP_SETTINGS) as LoopName[];

/** See the module comment. */
export class MemoryPlugin implements Plugin {
  readonly name = 'memory';
  private readonly clock: Clock;
  private readonly tickTimeoutMs: number;
  private readonly timers = new Map<LoopName, TimerHandle>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private sdk: PluginSDK | undefined;
  private running = false;

  constructor(private readonly opts: MemoryPluginOptions) {
    this.clock = opts.clock ?? systemClock;
    this.tickTimeoutMs = opts.tickTimeoutMs ?? 60_000;
  }

  /** Arm every loop's timer. */
  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    this.running = true;
    for (const name of LOOP_NAMES) this.arm(name);
  }

  /** Disarm every timer and wait for ticks in progress (each bounded by the tick time limit). */
  async stop(): Promise<void> {
    this.running = false;
    for (const h of this.timers.values()) this.clock.clearTimeout(h);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Names of the loops whose timer is armed (empty once stopped). */
  armed(): LoopName[] {
    return [...this.timers.keys()];
  }

  /**
   * Run one tick of `name` in its guard: never throws; resolves with the
   * tick's counts, or undefined when it failed or timed out (logged).
   */
  async tick(name: LoopName): Promise<Record<string, number> | undefined> {
    const log = this.log();
    let timer: TimerHandle | undefined;
    try {
      return await Promise.race([
        Promise.resolve().then(() => this.opts.loops.runLoopOnce(name)),
        new Promise<never>((_, reject) => {
          timer = this.clock.setTimeout(() => reject(new HomeAgentError('TIMEOUT', `memory loop ${name} took longer than ${this.tickTimeoutMs} ms`)), this.tickTimeoutMs);
        }),
      ]);
    } catch (err) {
      log?.error({ loop: name, err: errorMessage(err) }, 'memory loop tick failed; the loop goes on');
      return undefined;
    } finally {
      if (timer) this.clock.clearTimeout(timer);
    }
  }

  private log(): Logger | undefined {
    return this.sdk?.log;
  }

  /** Arm `name`'s timer from its interval setting (minutes, at least 1). */
  private arm(name: LoopName): void {
    if (!this.running || !this.sdk) return;
    const minutes = Math.max(1, numberSetting(this.sdk.settings(), LOOP_SETTINGS[name]));
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(name);
      const p = this.tick(name).finally(() => {
        this.inFlight.delete(p);
        this.arm(name);
      });
      this.inFlight.add(p);
    }, minutes * 60_000);
    this.timers.set(name, handle);
  }
}
