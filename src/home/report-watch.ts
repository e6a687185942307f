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
 * yes/no question) and logged. Commands on one channel whose watches end
 * within NOTICE_GROUP_MS of each other share one notice (a tester's three
 * commands to a dead device were three notices in a row). A stop drops every watch: nothing is said
 * after the stop button.
 */
import type { Clock, TimerHandle } from '../kernel/clock.js';
import type { Entity } from './entities.js';
import type { DeviceRegistry } from './registry.js';
import { unreportedText, type Lang } from './replies.js';

/** Default of plugin.home.report_timeout_ms: how long a reporting device has to report after a command, ms. */
export const REPORT_TIMEOUT_MS = 8000;

/** The least plugin.home.report_timeout_ms other than 0, ms (a tester's 1 ms made every command "not reported back"). */
export const REPORT_TIMEOUT_MIN_MS = 500;

/** Commands whose watches end this close together on one channel are said in one notice, ms. */
export const NOTICE_GROUP_MS = 5000;

/** How a command is named in a notice (expect()). */
export interface UnreportedWording {
  /** The command on one device, as replies.ts actionPhrase words it ("turn on the Kitchen Light"). */
  phrase: (e: Entity) => string;
  lang: Lang;
}

/** Devices of one or more commands that did not report (ReportWatchOptions.onMissing). */
export interface MissingReport {
  /** The commanded devices that sent no state message in time, in the order commanded. */
  entities: Entity[];
  /** What to say (replies.ts unreportedText of their commands' phrases). */
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
  wording: UnreportedWording;
  channel: string;
  /** When it ends, clock.monotonic() ms. */
  due: number;
  timer: TimerHandle;
}

/** Silent devices of a channel held for one notice (NOTICE_GROUP_MS). */
interface Held {
  items: Array<{ entity: Entity; phrase: string }>;
  lang: Lang;
  /** When the first was held, clock.monotonic() ms: the notice waits for others at most NOTICE_GROUP_MS from then. */
  since: number;
  timer?: TimerHandle;
}

/** See module comment. */
export class ReportWatch {
  private readonly watches = new Set<Watch>();
  private readonly held = new Map<string, Held>();

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
   * armed. `wording` names the command in the notice for the devices that
   * stayed silent.
   */
  expect(entities: readonly Entity[], wording: UnreportedWording, channel: string, since?: ReadonlyMap<string, number>): void {
    const ms = this.o.timeoutMs();
    if (!(ms > 0)) return;
    const watched = entities.filter((e) => this.o.registry.reportsState(e.id)).map((entity) => ({ entity, reports: since?.get(entity.id) ?? this.o.registry.liveReports(entity.id) }));
    if (!watched.length) return;
    const w: Watch = { entities: watched, wording, channel, due: this.o.clock.monotonic() + ms, timer: undefined as unknown as TimerHandle };
    w.timer = this.o.clock.setTimeout(() => this.check(w), ms);
    this.watches.add(w);
  }

  private check(w: Watch): void {
    if (!this.watches.delete(w)) return;
    const silent = w.entities.filter((x) => this.o.registry.liveReports(x.entity.id) === x.reports).map((x) => x.entity);
    const now = this.o.clock.monotonic();
    let held = this.held.get(w.channel);
    // One language per notice: one held in another is said first.
    if (held && silent.length && held.lang !== w.wording.lang) {
      this.flush(w.channel);
      held = undefined;
    }
    if (silent.length) {
      if (!held) this.held.set(w.channel, (held = { items: [], lang: w.wording.lang, since: now }));
      for (const entity of silent) {
        // A device commanded again is named once, with its latest command (a breaking tester's nine commands to one
        // light named it nine times).
        const at = held.items.findIndex((x) => x.entity.id === entity.id);
        if (at >= 0) held.items.splice(at, 1);
        held.items.push({ entity, phrase: w.wording.phrase(entity) });
      }
    }
    if (!held) return;
    // Another command's watch on this channel ends soon: wait for it, and say both in one notice; never longer than
    // NOTICE_GROUP_MS after the first was held (commands every few seconds put a tester's notice off for 35 s).
    let last = -Infinity;
    for (const x of this.watches) if (x.channel === w.channel && x.due - now <= NOTICE_GROUP_MS && x.due <= held.since + NOTICE_GROUP_MS) last = Math.max(last, x.due);
    this.o.clock.clearTimeout(held.timer);
    if (last > -Infinity) held.timer = this.o.clock.setTimeout(() => this.flush(w.channel), last - now + 1);
    else this.flush(w.channel);
  }

  private flush(channel: string): void {
    const held = this.held.get(channel);
    if (!held) return;
    this.held.delete(channel);
    this.o.clock.clearTimeout(held.timer);
    if (held.items.length) this.o.onMissing({ entities: held.items.map((x) => x.entity), text: unreportedText(held.items.map((x) => ({ name: x.entity.name, phrase: x.phrase })), held.lang), channel });
  }

  /** Commands being watched. */
  get pending(): number {
    return this.watches.size;
  }

  /** Drop every watch without a word (the stop button, the plugin stopping). */
  clear(): void {
    for (const w of this.watches) this.o.clock.clearTimeout(w.timer);
    this.watches.clear();
    for (const h of this.held.values()) this.o.clock.clearTimeout(h.timer);
    this.held.clear();
  }
}
