/**
 * The device registry: everything the box knows about the home, built only
 * from MQTT messages (HA discovery configs, zigbee2mqtt bridge/devices, state
 * and availability topics). It keeps the last raw message per topic and
 * derives entities, states and availability from them, so a restart (the
 * raw messages are persisted atomically in a JSON file) rebuilds exactly the
 * same view. A device announced by both HA discovery and zigbee2mqtt (same
 * IEEE address) is one device. Changes are announced to `onChange` listeners
 * (the intent vocabulary and the STT grammar are rebuilt from them).
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../kernel/log-types.js';
import type { Vocabulary, VocabEntity } from '../intents/types.js';
import { parseDiscoveryMessage, parseDiscoveryTopic } from './discovery.js';
import type { Entity, EntityState } from './entities.js';
import { applyStateMessage, entityTopics, readAvailability, type TopicRole } from './state.js';
import type { JsonStoreSpec } from '../kernel/store-version.js';
import { JsonFileStore } from './store.js';
import { parseBridgeDevices, type Z2mDevice } from './z2m.js';
import { WarnLimiter } from './log-limit.js';

/** Options of DeviceRegistry. */
export interface RegistryOptions {
  /** HA discovery prefix (default 'homeassistant'). */
  discoveryPrefix?: string;
  /** zigbee2mqtt base topic (default 'zigbee2mqtt'). */
  z2mPrefix?: string;
  /** Where to persist; omitted = in memory only. */
  storePath?: string;
  /** The data directory `storePath` is in (pre-migration copies go under its backups/). Default: the file's directory. */
  dataDir?: string;
  /** Largest accepted payload in bytes (default 262144); bigger ones are logged and ignored. */
  maxPayloadBytes?: number;
  /** Largest accepted zigbee2mqtt bridge/devices payload in bytes (default 8 MiB). */
  maxBridgePayloadBytes?: number;
  log: Logger;
  /** Wall clock, ms (tests inject one). */
  now?: () => number;
  /** Discovery topics to skip (the box's own announcements). */
  ignoreTopic?: (topic: string) => boolean;
  /** Quiet window of repeated warnings per topic, ms (default 60000; see WarnLimiter). */
  warnWindowMs?: number;
}

/** What changed: the set of entities (names, rooms) or one entity's state/availability. */
export type RegistryChange = { kind: 'entities' } | { kind: 'state'; id: string };

/** An entity with its current state, as tools and intents read it. */
export interface EntityView {
  entity: Entity;
  state: EntityState;
  /** False when the entity's availability says offline or the broker is disconnected. */
  available: boolean;
}

interface RawMessage {
  raw: string;
  seq: number;
}

/** The payload of home/registry.json (under `registry`, REGISTRY_STORE version 1). */
interface Persisted {
  discovery: Record<string, string>;
  bridge_devices?: string;
  topics: Record<string, RawMessage>;
  /**
   * Each entity's tracked state with the hash of the config it was read with (optional: files before
   * issue 14 have none). Devices send partial updates (zigbee2mqtt's `{"linkquality":50}`, a value the
   * box ignores): the state is what all of them made, which the last message of each topic alone is not.
   */
  states?: Record<string, { config: string; state: EntityState }>;
}

/**
 * home/registry.json's versions (src/kernel/store-version.ts):
 * - 0: the unversioned file of commit e216bba, `{"version": 1, "discovery": {...}, "bridge_devices"?: "...", "topics": {...}}`
 *   (a file whose inner `version` was not 1 was ignored by that release: it migrates to an empty registry);
 * - 1: `{"schema_version": 1, "registry": {"discovery", "bridge_devices"?, "topics"}}`.
 */
export const REGISTRY_STORE: JsonStoreSpec = {
  store: 'home-registry',
  version: 1,
  key: 'registry',
  migrations: [
    {
      to: 1,
      description: 'payload under "registry"; the inner "version" field is dropped',
      up: (old) => {
        const o = (typeof old === 'object' && old !== null ? old : {}) as Record<string, unknown>;
        if (o.version !== 1) return { discovery: {}, topics: {} };
        const { version: _version, ...rest } = o;
        return rest;
      },
    },
  ],
};

/** What an entity's state is read with (component and options: topics, templates, payloads, scales), hashed. */
function configHash(e: Entity): string {
  return createHash('sha256').update(JSON.stringify([e.component, e.config, e.availability])).digest('hex').slice(0, 16);
}

/** Last messages of topics no entity reads kept in memory (see rebuild). */
const MAX_ORPHAN_TOPICS = 256;

/** See module comment. */
export class DeviceRegistry {
  readonly discoveryPrefix: string;
  readonly z2mPrefix: string;
  private readonly log: Logger;
  private readonly maxPayload: number;
  private readonly maxBridgePayload: number;
  private readonly now: () => number;
  private readonly ignoreTopic: (topic: string) => boolean;
  private readonly store?: JsonFileStore<Persisted>;
  private readonly discoveryRaw = new Map<string, string>();
  private readonly discovery = new Map<string, Entity[]>();
  private bridgeRaw: string | undefined;
  private z2mDevices: Z2mDevice[] = [];
  private readonly topicRaw = new Map<string, RawMessage>();
  private seq = 0;
  private byId = new Map<string, Entity>();
  private states = new Map<string, EntityState>();
  /** Hash of the config each entry of `states` was read with (configHash). */
  private stateConfig = new Map<string, string>();
  private index = new Map<string, Array<{ id: string; role: TopicRole }>>();
  /** Live (not retained) messages on a state topic (not current_temperature), per entity id, since start (report-watch.ts). */
  private readonly live = new Map<string, number>();
  private signature = '';
  private connected = true;
  /** Discovery/bridge input changed since the last rebuild. */
  private dirty = false;
  private pendingBuild: NodeJS.Immediate | undefined;
  private readonly listeners = new Set<(c: RegistryChange) => void>();
  private readonly warnings: WarnLimiter;

  constructor(opts: RegistryOptions) {
    this.discoveryPrefix = opts.discoveryPrefix ?? 'homeassistant';
    this.z2mPrefix = opts.z2mPrefix ?? 'zigbee2mqtt';
    this.log = opts.log;
    this.maxPayload = opts.maxPayloadBytes ?? 262_144;
    this.maxBridgePayload = opts.maxBridgePayloadBytes ?? 8 * 1024 * 1024;
    this.now = opts.now ?? Date.now;
    this.ignoreTopic = opts.ignoreTopic ?? (() => false);
    this.warnings = new WarnLimiter({ log: opts.log, now: this.now, ...(opts.warnWindowMs !== undefined ? { windowMs: opts.warnWindowMs } : {}) });
    if (opts.storePath) this.store = new JsonFileStore<Persisted>(opts.storePath, opts.log, { spec: REGISTRY_STORE, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) });
  }

  /**
   * Load the persisted raw messages (if any) and rebuild. Safe when the file
   * is missing or corrupt (logged). An older file is migrated (a copy kept);
   * one written by a newer release throws StoreTooNewError.
   */
  load(): void {
    const p = this.store?.read();
    if (!p) return;
    // A config kept from a run that took it, of a topic this box now ignores (RegistryOptions.ignoreTopic), is dropped.
    for (const [topic, raw] of Object.entries(p.discovery ?? {})) if (!this.ignoreTopic(topic)) this.acceptDiscovery(topic, raw, false);
    if (typeof p.bridge_devices === 'string') this.acceptBridge(p.bridge_devices, false);
    for (const [topic, m] of Object.entries(p.topics ?? {})) {
      if (!m || typeof m.raw !== 'string' || typeof m.seq !== 'number') continue;
      this.topicRaw.set(topic, m);
      this.seq = Math.max(this.seq, m.seq);
    }
    if (p.states && typeof p.states === 'object') {
      for (const [id, v] of Object.entries(p.states)) {
        if (!v || typeof v.config !== 'string' || !v.state || typeof v.state !== 'object' || Array.isArray(v.state)) continue;
        this.states.set(id, { ...v.state });
        this.stateConfig.set(id, v.config);
      }
    }
    this.rebuild();
    // A file written before availability was checked may hold junk on an availability topic: it says nothing.
    for (const [topic, targets] of this.index) {
      const m = this.topicRaw.get(topic);
      if (m && targets.every((t) => typeof t.role === 'object') && !targets.some((t) => this.readsAvailability(t, m.raw))) this.topicRaw.delete(topic);
    }
  }

  /** Rebuild now if needed and write pending changes (called on stop). */
  flush(): void {
    if (this.pendingBuild) clearImmediate(this.pendingBuild);
    this.pendingBuild = undefined;
    this.ensureBuilt();
    this.store?.flush();
  }

  /**
   * Discovery messages arrive in bursts (hundreds of retained configs at
   * connect): they only mark the view dirty, and one rebuild runs after the
   * burst (setImmediate) or as soon as anything reads the registry.
   */
  private ensureBuilt(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.rebuild();
    this.save();
  }

  /** Topic filters to subscribe to: discovery, bridge/devices and every entity topic. */
  subscriptions(): string[] {
    this.ensureBuilt();
    return [`${this.discoveryPrefix}/#`, `${this.z2mPrefix}/bridge/devices`, ...this.index.keys()];
  }

  /** Listen for changes; returns an unsubscribe function. Listener errors are logged. */
  onChange(cb: (c: RegistryChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** The broker connection state; while disconnected every entity reads as unavailable (as HA does). */
  setConnected(connected: boolean): void {
    if (this.connected === connected) return;
    this.connected = connected;
    for (const id of this.byId.keys()) this.emit({ kind: 'state', id });
  }

  /**
   * Handle one MQTT message (`retained`: the broker's retained copy, sent at
   * subscribe time, not a report the device just made). Malformed or
   * oversized payloads are logged and ignored; never throws.
   */
  handleMessage(topic: string, payload: Buffer | string, retained = false): void {
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    const isBridge = topic === `${this.z2mPrefix}/bridge/devices`;
    const limit = isBridge ? this.maxBridgePayload : this.maxPayload;
    if (size > limit) {
      this.warnings.warn(topic, { topic, bytes: size, limit }, 'oversized MQTT payload ignored');
      return;
    }
    const raw = typeof payload === 'string' ? payload : payload.toString('utf8');
    if (isBridge) {
      if (this.acceptBridge(raw, true)) this.changed();
      return;
    }
    if (parseDiscoveryTopic(topic, this.discoveryPrefix)) {
      if (this.ignoreTopic(topic)) return;
      if (this.acceptDiscovery(topic, raw, true)) this.changed();
      return;
    }
    this.ensureBuilt();
    const targets = this.index.get(topic);
    if (!targets) return;
    // Availability: a payload that is neither the available nor the not-available payload of any source reading
    // this topic is not a statement about the device; the last valid one stands (HA ignores it too).
    const avail = targets.filter((t) => typeof t.role === 'object');
    if (avail.length === targets.length && !avail.some((t) => this.readsAvailability(t, raw))) {
      this.warnings.warn(topic, { topic, payload: raw.slice(0, 80), entities: avail.map((t) => t.id).slice(0, 5) }, 'availability payload matches neither payload_available nor payload_not_available; ignored');
      return;
    }
    const previous = this.topicRaw.get(topic);
    let rejected = false;
    this.topicRaw.set(topic, { raw, seq: ++this.seq });
    for (const t of targets) {
      const entity = this.byId.get(t.id);
      if (!entity) continue;
      if (typeof t.role === 'object') {
        this.emit({ kind: 'state', id: t.id });
        continue;
      }
      // A live message on a state topic is the device's report (report-watch.ts), changed or not: a light told to turn
      // off that was off reports OFF again (a tester's demo lights were all said to be silent). Not the current
      // temperature a thermostat sends on its own: it says nothing about a command.
      if (!retained && raw.length > 0 && t.role !== 'current_temperature') this.live.set(t.id, (this.live.get(t.id) ?? 0) + 1);
      const state = this.states.get(t.id) ?? {};
      const reject = (field: string, value: unknown, range: [number, number], reason?: string): void => {
        rejected = true;
        this.warnings.warn(topic, { topic, entity: t.id, field, value, range }, reason ?? 'device value outside its declared range ignored');
      };
      if (applyStateMessage(entity, state, t.role, raw, reject)) {
        state.updated_at = this.now();
        this.states.set(t.id, state);
        this.emit({ kind: 'state', id: t.id });
      } else if (raw.length > 0) {
        this.log.debug({ topic, entity: t.id }, 'state payload not understood');
      }
    }
    // A message with a value out of range is not kept as the topic's last message: a rebuild or a restart
    // recomputes the state from the last message that was valid (its valid parts were applied above).
    if (rejected && previous) this.topicRaw.set(topic, previous);
    this.save();
  }

  /** True when `raw` is a valid (available or not-available) payload for the availability source `t` names. */
  private readsAvailability(t: { id: string; role: TopicRole }, raw: string): boolean {
    if (typeof t.role !== 'object') return false;
    const src = this.byId.get(t.id)?.availability[t.role.availability];
    return !!src && readAvailability(src, raw) !== undefined;
  }

  /**
   * Why the entities of a new config at `topic` may not be taken, or
   * undefined. A config may not take a unique_id another discovery topic
   * already announced (HA ignores such a duplicate too), nor the spoken name
   * of another device in the same room (or where either has no room), unless
   * both are the same zigbee device (same IEEE). The first announcement keeps
   * its id and name; a re-announcement on its own topic updates it.
   */
  private conflict(topic: string, entities: Entity[]): string | undefined {
    const norm = (n: string): string => n.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
    const others: Entity[] = [];
    for (const [t, list] of this.discovery) if (t !== topic) others.push(...list);
    for (const d of this.z2mDevices) others.push(...d.entities);
    for (const e of entities) {
      for (const o of others) {
        if (o.ieee && e.ieee && o.ieee === e.ieee) continue;
        if (o.id === e.id) return `unique_id "${e.id}" is already announced by ${o.discovery_topic ?? 'zigbee2mqtt'}`;
        const sameRoom = !o.area || !e.area || norm(o.area) === norm(e.area);
        if (sameRoom && norm(o.name) === norm(e.name)) return `the name "${e.name}" already belongs to ${o.id} (${o.discovery_topic ?? 'zigbee2mqtt'})`;
      }
    }
    return undefined;
  }

  private acceptDiscovery(topic: string, raw: string, live: boolean): boolean {
    const r = parseDiscoveryMessage(topic, raw, this.discoveryPrefix);
    switch (r.kind) {
      case 'remove':
        this.discoveryRaw.delete(topic);
        if (this.discovery.delete(topic)) {
          if (live) this.log.info({ topic }, 'device removed by discovery');
          return true;
        }
        return false;
      case 'invalid':
        this.warnings.warn(topic, { topic, reason: r.reason }, 'malformed discovery payload ignored');
        return false;
      case 'ignore':
        this.log.debug({ topic, reason: r.reason }, 'discovery message ignored');
        return false;
      case 'config': {
        const clash = this.conflict(topic, r.entities);
        if (clash) {
          this.warnings.warn(topic, { topic, reason: clash }, 'discovery config refused: it would take another device\'s id or name');
          return false;
        }
        this.discoveryRaw.set(topic, raw);
        this.discovery.set(topic, r.entities);
        return true;
      }
    }
  }

  private acceptBridge(raw: string, live: boolean): boolean {
    if (raw.length === 0) {
      this.bridgeRaw = undefined;
      this.z2mDevices = [];
      return true;
    }
    const r = parseBridgeDevices(raw, this.z2mPrefix);
    if (typeof r === 'string') {
      this.warnings.warn(`${this.z2mPrefix}/bridge/devices`, { reason: r }, 'malformed zigbee2mqtt bridge/devices ignored');
      return false;
    }
    this.bridgeRaw = raw;
    this.z2mDevices = r;
    if (live) this.log.info({ devices: r.length }, 'zigbee2mqtt devices updated');
    return true;
  }

  private changed(): void {
    this.dirty = true;
    if (this.pendingBuild) return;
    this.pendingBuild = setImmediate(() => {
      this.pendingBuild = undefined;
      this.ensureBuilt();
    });
  }

  private rebuild(): void {
    const entities: Entity[] = [];
    const disc = [...this.discovery.values()].flat().map((e) => ({ ...e, aliases: [...e.aliases] }));
    for (const dev of this.z2mDevices) {
      const mine = disc.filter((e) => e.ieee === dev.ieee);
      const area = mine.find((e) => e.area)?.area;
      for (const z of dev.entities) {
        const twin = mine.find(
          (e) => e.component === z.component && (!['sensor', 'binary_sensor'].includes(z.component) || e.config.value_template === z.config.value_template),
        );
        if (twin) {
          twin.source = 'both';
          for (const a of [dev.friendly_name, ...z.aliases]) if (a !== twin.name && !twin.aliases.includes(a)) twin.aliases.push(a);
          continue;
        }
        entities.push({ ...z, area: z.area ?? area });
      }
    }
    entities.push(...disc);
    const byId = new Map<string, Entity>();
    for (const e of entities) {
      if (byId.has(e.id)) this.log.warn({ id: e.id }, 'two announcements share one unique_id; the later wins');
      byId.set(e.id, e);
    }
    const index = new Map<string, Array<{ id: string; role: TopicRole }>>();
    for (const e of byId.values()) {
      for (const t of entityTopics(e)) {
        const list = index.get(t.topic) ?? [];
        list.push({ id: e.id, role: t.role });
        index.set(t.topic, list);
      }
    }
    const states = new Map<string, EntityState>();
    const stateConfig = new Map<string, string>();
    for (const e of byId.values()) {
      const hash = configHash(e);
      stateConfig.set(e.id, hash);
      const prev = this.states.get(e.id);
      if (prev && this.stateConfig.get(e.id) === hash) {
        // Read with the same config: the tracked state stands (it is more than the last message of each topic).
        states.set(e.id, prev);
        continue;
      }
      const st: EntityState = {};
      const msgs = entityTopics(e)
        .filter((t) => typeof t.role === 'string')
        .map((t) => ({ ...t, msg: this.topicRaw.get(t.topic) }))
        .filter((t): t is typeof t & { msg: RawMessage } => !!t.msg)
        .sort((a, b) => a.msg.seq - b.msg.seq);
      for (const m of msgs) if (typeof m.role === 'string') applyStateMessage(e, st, m.role, m.msg.raw);
      if (prev?.updated_at !== undefined) st.updated_at = prev.updated_at;
      states.set(e.id, st);
    }
    // The last message of a topic no entity reads any more is kept (a few hundred at most, newest first), so a
    // config that comes back (or an announcement that briefly replaced it) finds its device's state again;
    // only the topics entities read are saved.
    const orphans = [...this.topicRaw.entries()].filter(([t]) => !index.has(t)).sort((a, b) => b[1].seq - a[1].seq);
    for (const [t] of orphans.slice(MAX_ORPHAN_TOPICS)) this.topicRaw.delete(t);
    this.byId = byId;
    this.index = index;
    this.states = states;
    this.stateConfig = stateConfig;
    const sig = JSON.stringify([...byId.values()].map((e) => [e.id, e.name, e.area, e.component, e.aliases, e.device_class]).sort());
    if (sig !== this.signature) {
      this.signature = sig;
      this.emit({ kind: 'entities' });
    }
  }

  private save(): void {
    this.store?.write(() => ({
      discovery: Object.fromEntries(this.discoveryRaw),
      ...(this.bridgeRaw !== undefined ? { bridge_devices: this.bridgeRaw } : {}),
      topics: Object.fromEntries([...this.topicRaw].filter(([t]) => this.index.has(t))),
      states: Object.fromEntries([...this.states].filter(([id]) => this.stateConfig.has(id)).map(([id, state]) => [id, { config: this.stateConfig.get(id) as string, state }])),
    }));
  }

  private emit(c: RegistryChange): void {
    for (const cb of this.listeners) {
      try {
        cb(c);
      } catch (err) {
        this.log.error({ err }, 'registry change listener failed');
      }
    }
  }

  /**
   * Whether entity `id` reports its state: it has a state topic (any topic
   * of a state role: state, brightness, position, ...) and is not
   * `optimistic` (HA: the device sends no state back; its state is assumed).
   */
  reportsState(id: string): boolean {
    this.ensureBuilt();
    const e = this.byId.get(id);
    if (!e || e.config.optimistic === true) return false;
    return entityTopics(e).some((t) => typeof t.role === 'string' && t.role !== 'current_temperature');
  }

  /** How many live (not retained) messages on entity `id`'s state topics (not its current temperature) came since start, changed or not. */
  liveReports(id: string): number {
    return this.live.get(id) ?? 0;
  }

  /** True while the broker connection is up. */
  get brokerConnected(): boolean {
    return this.connected;
  }

  /**
   * Availability of an entity per HA rules (availability_mode all/any/latest;
   * no sources = available). With `deviceOnly`, the broker connection is not
   * considered (a command may wait for the reconnect; the last known device
   * availability decides).
   */
  isAvailable(id: string, deviceOnly = false): boolean {
    this.ensureBuilt();
    const e = this.byId.get(id);
    if (!e || (!this.connected && !deviceOnly)) return false;
    if (e.availability.length === 0) return true;
    const vals = e.availability.map((src) => {
      const m = this.topicRaw.get(src.topic);
      const v = m ? readAvailability(src, m.raw) : undefined;
      return { v: v ?? (src.optional ? true : undefined), seq: m?.seq ?? -1, optional: !!src.optional };
    });
    switch (e.availability_mode) {
      case 'all':
        return vals.every((x) => x.v === true);
      case 'any':
        return vals.some((x) => x.v === true);
      case 'latest': {
        const known = vals.filter((x) => x.v !== undefined && !(x.optional && x.seq < 0)).sort((a, b) => b.seq - a.seq);
        return known[0]?.v === true;
      }
    }
  }

  /** All entities, sorted by area then name. */
  entities(): Entity[] {
    this.ensureBuilt();
    return [...this.byId.values()].sort((a, b) => (a.area ?? '~').localeCompare(b.area ?? '~') || a.name.localeCompare(b.name));
  }

  /** One entity by id. */
  get(id: string): Entity | undefined {
    this.ensureBuilt();
    return this.byId.get(id);
  }

  /** An entity with its state and availability. */
  view(id: string): EntityView | undefined {
    this.ensureBuilt();
    const entity = this.byId.get(id);
    if (!entity) return undefined;
    return { entity, state: { ...(this.states.get(id) ?? {}) }, available: this.isAvailable(id) };
  }

  /** Views of every entity. */
  views(): EntityView[] {
    return this.entities().map((e) => this.view(e.id) as EntityView);
  }

  /** The intent vocabulary (src/intents/types.ts): every entity's name, domain, room, aliases; every room. */
  vocabulary(): Vocabulary {
    const entities: VocabEntity[] = this.entities().map((e) => ({
      id: e.id,
      name: e.name,
      domain: e.component,
      ...(e.area ? { area: e.area } : {}),
      ...(e.aliases.length ? { aliases: [...e.aliases] } : {}),
      ...(e.device_class ? { device_class: e.device_class } : {}),
    }));
    const areas = [...new Set(entities.map((e) => e.area).filter((a): a is string => !!a))].sort();
    return { entities, areas };
  }
}
