/**
 * Did the device hear it? A command the broker acknowledged (QoS 1 PUBACK)
 * reached the broker, not the device: a broker that restarted takes a
 * command before the devices have subscribed again, and drops it, and a
 * zigbee device out of range never gets it. Home Assistant says "Turned on"
 * either way. Here a device that reports its state (it has a state topic
 * and is not `optimistic`) is expected to report within `timeoutMs` of a
 * command: a live (not retained) message on one of its state topics,
 * changed or not (registry.ts liveReports). The devices of one command that
 * sent none are named in one notice on the channel that gave the command
 * ("I asked to turn on the Kitchen Light, but it has not reported back, so
 * it may not have happened."; home-plugin.ts says it, not over an open
 * yes/no question) and logged. A stop drops every watch: nothing is said
 * after the stop button.
 */
import type { Clock, TimerHandle } from '../kernel/clock.js';
import type { Entity } from './entities.js';
import type { DeviceRegistry } from './registry.js';

/** Default of plugin.home.report_timeout_ms: how long a reporting device has to report after a command, ms. */
export const REPORT_TIMEOUT_MS = 8000;

/** The least plugin.home.report_timeout_ms other than 0, ms (a tester's 1 ms made every command "not reported back"). */
export const REPORT_TIMEOUT_MIN_MS = 500;

/** Devices of one command that did not report (ReportWatchOptions.onMissing). */
export interface MissingReport {
  /** The commanded devices that sent no state message in time, in the order commanded. */
  entities: Entity[];
  /** What to say (the `notice` given to expect(), for these devices). */
  text: string;
  /** The channel that gave the command. */
  channel: string;
}

/** Options of ReportWatch. */
export interface ReportWatchOptions {
  registry: Pick<DeviceRegistry, 'reportsState' | 'liveReports'>;
  clock: Clock;
  /** ms a device has to report; 0 or less turns the watch off (read per command: plugin.home.report_timeout_ms). */
  timeoutMs: () => number;
  onMissing: (m: MissingReport) => void;
}

interface Watch {
  entities: Array<{ entity: Entity; reports: number }>;
  notice: (silent: Entity[]) => string;
  channel: string;
  timer: TimerHandle;
}

/** See module comment. */
export class ReportWatch {
  private readonly watches = new Set<Watch>();

  constructor(private readonly o: ReportWatchOptions) {}

  /**
   * The devices' report counts now: take it before the command is sent, and
   * hand it to expect(). A device quick to answer reports before the
   * broker's acknowledgement reaches the box (a count taken after it missed
   * those reports, and every light of a tester's "turn off the lights" was
   * said to be silent).
   */
  before(entities: readonly Entity[]): ReadonlyMap<string, number> {
    return new Map(entities.map((e) => [e.id, this.o.registry.liveReports(e.id)]));
  }

  /**
   * Expect each of `entities` that reports its state to have reported since
   * `since` (before(), taken before the command was sent; a device missing
   * from it counts from now) within the timeout, counted from now (call it
   * once the broker acknowledged the command). Devices that do not report
   * state are not watched; with none left, or the watch off, nothing is
   * armed. `notice` words what to say for the devices that stayed silent
   * (replies.ts unreportedNotice).
   */
  expect(entities: readonly Entity[], notice: (silent: Entity[]) => string, channel: string, since?: ReadonlyMap<string, number>): void {
    const ms = this.o.timeoutMs();
    if (!(ms > 0)) return;
    const watched = entities.filter((e) => this.o.registry.reportsState(e.id)).map((entity) => ({ entity, reports: since?.get(entity.id) ?? this.o.registry.liveReports(entity.id) }));
    if (!watched.length) return;
    const w: Watch = { entities: watched, notice, channel, timer: undefined as unknown as TimerHandle };
    w.timer = this.o.clock.setTimeout(() => this.check(w), ms);
    this.watches.add(w);
  }

  private check(w: Watch): void {
    if (!this.watches.delete(w)) return;
    const silent = w.entities.filter((x) => this.o.registry.liveReports(x.entity.id) === x.reports).map((x) => x.entity);
    if (silent.length) this.o.onMissing({ entities: silent, text: w.notice(silent), channel: w.channel });
  }

  /** Commands being watched. */
  get pending(): number {
    return this.watches.size;
  }

  /** Drop every watch without a word (the stop button, the plugin stopping). */
  clear(): void {
    for (const w of this.watches) this.o.clock.clearTimeout(w.timer);
    this.watches.clear();
  }
}
