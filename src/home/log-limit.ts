/**
 * One small rate limiter for repeated warnings about bad input (an MQTT
 * topic flooding malformed payloads must not flood the log). Per key (the
 * topic) and message: the first warning is logged at once; later ones
 * within `windowMs` are only counted; the first one after the window is
 * logged with `suppressed: N` (how many were dropped since the last line).
 * A key's count is kept at most `maxKeys` keys (the oldest is forgotten
 * first), so a flood of distinct topics cannot grow it without bound.
 */
import type { Logger } from '../kernel/log-types.js';

/** Options of WarnLimiter. */
export interface WarnLimiterOptions {
  log: Logger;
  /** Wall or monotonic clock, ms (tests inject a FakeClock's). */
  now: () => number;
  /** Quiet window per key, ms (default 60000). */
  windowMs?: number;
  /** Keys remembered (default 1000). */
  maxKeys?: number;
}

interface Slot {
  last: number;
  suppressed: number;
}

/** See module comment. */
export class WarnLimiter {
  private readonly slots = new Map<string, Slot>();
  private readonly windowMs: number;
  private readonly maxKeys: number;

  constructor(private readonly opts: WarnLimiterOptions) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.maxKeys = opts.maxKeys ?? 1000;
  }

  /**
   * Log `msg` with `obj` at `level` (default warn) unless the same `key` and
   * `msg` were logged less than `windowMs` ago. Returns true when it logged.
   */
  warn(key: string, obj: Record<string, unknown>, msg: string, level: 'warn' | 'info' | 'debug' = 'warn'): boolean {
    const k = `${msg}\u0000${key}`;
    const now = this.opts.now();
    const slot = this.slots.get(k);
    if (slot && now - slot.last < this.windowMs) {
      slot.suppressed++;
      return false;
    }
    const suppressed = slot?.suppressed ?? 0;
    this.slots.delete(k);
    this.slots.set(k, { last: now, suppressed: 0 });
    if (this.slots.size > this.maxKeys) {
      const oldest = this.slots.keys().next().value;
      if (oldest !== undefined) this.slots.delete(oldest);
    }
    this.opts.log[level](suppressed ? { ...obj, suppressed } : obj, suppressed ? `${msg} (${suppressed} more since the last report)` : msg);
    return true;
  }
}
