/**
 * Typed event bus (seed 000 §12; zigbee2mqtt lib/eventBus.ts style): a map
 * from event name to payload type, listeners grouped by owner so one call
 * removes everything a plugin subscribed, every callback isolated so a
 * throwing or rejecting subscriber is logged and never reaches the publisher.
 */
import { RETAINED_EVENTS, type EventMap, type EventType } from './events.js';
import type { Logger } from './log-types.js';
import { errorMessage } from './errors.js';

type Listener = { owner: string; fn: (payload: never) => void | Promise<void> };

/** The kernel's event bus. Publishing is synchronous; async listeners run detached. */
export class EventBus {
  private readonly listeners = new Map<string, Listener[]>();
  /** Last payload of each retained event (RETAINED_EVENTS). */
  private readonly retained = new Map<string, unknown>();
  constructor(private readonly log: Logger) {}

  /**
   * Subscribe `owner`'s handler to `type`; returns an unsubscribe function.
   * For a retained event (RETAINED_EVENTS) the last payload published, if
   * any, is handed to the handler at once, before this returns.
   */
  subscribe<K extends EventType>(owner: string, type: K, fn: (payload: EventMap[K]) => void | Promise<void>): () => void {
    const list = this.listeners.get(type) ?? [];
    const entry: Listener = { owner, fn: fn as Listener['fn'] };
    list.push(entry);
    this.listeners.set(type, list);
    if (this.retained.has(type)) this.deliver(type, entry, this.retained.get(type) as EventMap[K]);
    return () => {
      const cur = this.listeners.get(type);
      if (cur) this.listeners.set(type, cur.filter((l) => l !== entry));
    };
  }

  /** Deliver `payload` to every subscriber of `type`. Never throws. */
  publish<K extends EventType>(type: K, payload: EventMap[K]): void {
    if (RETAINED_EVENTS.has(type)) this.retained.set(type, payload);
    const list = this.listeners.get(type);
    if (!list) return;
    for (const l of [...list]) this.deliver(type, l, payload);
  }

  /** Call one listener, isolated: a throw or a rejection is logged. */
  private deliver<K extends EventType>(type: K, l: Listener, payload: EventMap[K]): void {
    try {
      const r = (l.fn as (p: EventMap[K]) => void | Promise<void>)(payload);
      if (r && typeof (r as Promise<void>).catch === 'function') {
        (r as Promise<void>).catch((err: unknown) => this.log.error({ err: errorMessage(err), event: type, owner: l.owner }, 'event subscriber failed'));
      }
    } catch (err) {
      this.log.error({ err: errorMessage(err), event: type, owner: l.owner }, 'event subscriber failed');
    }
  }

  /** Remove every subscription of `owner`. */
  removeOwner(owner: string): void {
    for (const [type, list] of this.listeners) this.listeners.set(type, list.filter((l) => l.owner !== owner));
  }

  /** Number of subscriptions held by `owner` (tests, `homeagent plugins`). */
  countOwner(owner: string): number {
    let n = 0;
    for (const list of this.listeners.values()) n += list.filter((l) => l.owner === owner).length;
    return n;
  }
}
