/**
 * Home Assistant MQTT discovery: parse one message on
 * `<prefix>/<component>/[<node_id>/]<object_id>/config` (and the device-based
 * form `<prefix>/device/<object_id>/config` with a `components` map) into
 * entities. Source: HA docs "MQTT Discovery" and core
 * homeassistant/components/mqtt/discovery.py (topic regex, abbreviations,
 * `~`, empty payload = removal, availability defaults).
 */
import { expandDiscoveryPayload } from './abbreviations.js';
import { checkDiscoveryConfig, hasPrototypeKey } from './discovery-schema.js';
import { isHomeAgentBoxConfig } from './box-entity.js';
import {
  findIeee,
  isComponent,
  nameAliases,
  type AvailabilitySource,
  type Component,
  type DeviceInfo,
  type Entity,
} from './entities.js';
import { parseJson } from '../kernel/json.js';

/** Outcome of parsing one discovery message. */
export type DiscoveryResult =
  | { kind: 'config'; topic: string; entities: Entity[] }
  | { kind: 'remove'; topic: string }
  | { kind: 'ignore'; topic: string; reason: string }
  | { kind: 'invalid'; topic: string; reason: string };

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const TOPIC_RE = /^(\w+)\/(?:([a-zA-Z0-9_-]+)\/)?([a-zA-Z0-9_-]+)\/config$/;

/** Split a discovery topic below `prefix`; undefined when it is not a config topic. */
export function parseDiscoveryTopic(topic: string, prefix: string): { component: string; node_id?: string; object_id: string } | undefined {
  if (!topic.startsWith(prefix + '/')) return undefined;
  const m = TOPIC_RE.exec(topic.slice(prefix.length + 1));
  if (!m) return undefined;
  return { component: m[1] as string, node_id: m[2], object_id: m[3] as string };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function hasWildcard(t: string): boolean {
  return t.includes('+') || t.includes('#');
}

function parseDevice(raw: unknown, fallbackId: string): DeviceInfo {
  const d = isObject(raw) ? raw : {};
  const ids: string[] = [];
  if (Array.isArray(d.identifiers)) for (const i of d.identifiers) if (typeof i === 'string') ids.push(i);
  if (typeof d.identifiers === 'string') ids.push(d.identifiers);
  if (Array.isArray(d.connections)) {
    for (const c of d.connections) if (Array.isArray(c) && c.length === 2) ids.push(`${String(c[0])}:${String(c[1])}`);
  }
  const ieee = findIeee(ids);
  return {
    id: ieee ?? ids[0] ?? fallbackId,
    identifiers: ids,
    name: str(d.name),
    manufacturer: str(d.manufacturer),
    model: str(d.model),
    suggested_area: str(d.suggested_area),
  };
}

function parseAvailability(cfg: Json): { sources: AvailabilitySource[]; mode: Entity['availability_mode'] } | string {
  const sources: AvailabilitySource[] = [];
  const defAvail = str(cfg.payload_available) ?? 'online';
  const defNot = str(cfg.payload_not_available) ?? 'offline';
  if (cfg.availability_topic !== undefined) {
    const t = str(cfg.availability_topic);
    if (!t || hasWildcard(t)) return 'availability_topic must be a topic without wildcards';
    sources.push({ topic: t, payload_available: defAvail, payload_not_available: defNot, value_template: str(cfg.availability_template) });
  }
  if (cfg.availability !== undefined) {
    if (!Array.isArray(cfg.availability)) return 'availability must be a list';
    for (const a of cfg.availability) {
      if (!isObject(a)) return 'availability entries must be objects';
      const t = str(a.topic);
      if (!t || hasWildcard(t)) return 'availability entry without a valid topic';
      sources.push({
        topic: t,
        payload_available: str(a.payload_available) ?? 'online',
        payload_not_available: str(a.payload_not_available) ?? 'offline',
        value_template: str(a.value_template),
      });
    }
  }
  const m = cfg.availability_mode;
  const mode = m === 'all' || m === 'any' || m === 'latest' ? m : 'latest';
  return { sources, mode };
}

const NEEDS_COMMAND: ReadonlySet<Component> = new Set(['light', 'lock', 'fan', 'button', 'scene']);
const NEEDS_STATE: ReadonlySet<Component> = new Set(['sensor', 'binary_sensor']);

function humanise(objectId: string): string {
  return objectId.replace(/[_-]+/g, ' ').trim();
}

/**
 * Build one entity from an expanded config. Returns a reason string when the
 * config is invalid (wrong types, missing required topics, wildcard topics).
 */
export function entityFromConfig(component: Component, cfg: Json, ids: { topic: string; node_id?: string; object_id: string }): Entity | string {
  const bad = checkDiscoveryConfig(component, cfg);
  if (bad) return bad;
  if (cfg.name !== undefined && cfg.name !== null && typeof cfg.name !== 'string') return 'name must be a string or null';
  if (cfg.unique_id !== undefined && typeof cfg.unique_id !== 'string' && typeof cfg.unique_id !== 'number') return 'unique_id must be a string';
  if (cfg.device !== undefined && !isObject(cfg.device)) return 'device must be an object';
  for (const [k, v] of Object.entries(cfg)) {
    if (k.endsWith('_topic') && v !== undefined && v !== null && typeof v !== 'string') return `${k} must be a string`;
    if (k.endsWith('command_topic') && typeof v === 'string' && hasWildcard(v)) return `${k} must not contain wildcards`;
  }
  if (NEEDS_COMMAND.has(component) && !str(cfg.command_topic)) return `${component} needs a command_topic`;
  if (NEEDS_STATE.has(component) && !str(cfg.state_topic)) return `${component} needs a state_topic`;
  const avail = parseAvailability(cfg);
  if (typeof avail === 'string') return avail;
  const uniqueId = cfg.unique_id !== undefined ? String(cfg.unique_id) : undefined;
  const id = uniqueId ?? `${component}.${ids.node_id ? ids.node_id + '_' : ''}${ids.object_id}`;
  const device = parseDevice(cfg.device, id);
  const entityName = typeof cfg.name === 'string' && cfg.name.trim() ? cfg.name.trim() : undefined;
  const name = entityName ?? device.name ?? humanise(ids.object_id);
  const ieee = findIeee([...device.identifiers, uniqueId]);
  const aliases = nameAliases(name);
  if (entityName && device.name && entityName !== device.name && !entityName.startsWith(device.name)) {
    aliases.push(`${device.name} ${entityName}`);
  }
  return {
    id,
    component,
    name,
    aliases,
    area: device.suggested_area,
    device_class: str(cfg.device_class),
    source: 'discovery',
    discovery_topic: ids.topic,
    ieee,
    device,
    config: cfg,
    availability: avail.sources,
    availability_mode: avail.mode,
  };
}

/**
 * Parse one message under the discovery prefix. `payload` is the raw text;
 * an empty payload removes what the topic announced. Errors are returned as
 * `invalid` results (the caller logs and ignores them), never thrown.
 */
export function parseDiscoveryMessage(topic: string, payload: string, prefix: string): DiscoveryResult {
  const t = parseDiscoveryTopic(topic, prefix);
  if (!t) return { kind: 'ignore', topic, reason: 'not a discovery config topic' };
  if (payload.length === 0) return { kind: 'remove', topic };
  let raw: unknown;
  try {
    raw = parseJson(payload);
  } catch (err) {
    return { kind: 'invalid', topic, reason: `payload is not JSON (${(err as Error).message})` };
  }
  if (!isObject(raw)) return { kind: 'invalid', topic, reason: 'payload is not a JSON object' };
  if (hasPrototypeKey(raw)) return { kind: 'invalid', topic, reason: 'payload has a key named after an Object.prototype property (__proto__, constructor, ...)' };
  const cfg = expandDiscoveryPayload(raw);
  if (isHomeAgentBoxConfig(cfg)) return { kind: 'ignore', topic, reason: "a HomeAgent box's own entity (its controls, not a device to control)" };
  if (t.component === 'device') {
    if (!isObject(cfg.components)) return { kind: 'invalid', topic, reason: 'device discovery without components' };
    const shared: Json = { ...cfg };
    delete shared.components;
    const entities: Entity[] = [];
    for (const [cid, comp] of Object.entries(cfg.components)) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(cid)) return { kind: 'invalid', topic, reason: `component id "${cid.slice(0, 40)}" must be 1-64 letters, digits, _ or -` };
      if (!isObject(comp)) return { kind: 'invalid', topic, reason: `component ${cid} is not an object` };
      const platform = str(comp.platform);
      if (!platform || !isComponent(platform)) continue;
      const merged: Json = { ...shared, ...comp };
      const e = entityFromConfig(platform, merged, { topic, node_id: t.object_id, object_id: cid });
      if (typeof e === 'string') return { kind: 'invalid', topic, reason: `component ${cid}: ${e}` };
      entities.push(e);
    }
    if (entities.length === 0) return { kind: 'ignore', topic, reason: 'no supported components' };
    return { kind: 'config', topic, entities };
  }
  if (!isComponent(t.component)) return { kind: 'ignore', topic, reason: `component ${t.component} not supported` };
  const e = entityFromConfig(t.component, cfg, { topic, node_id: t.node_id, object_id: t.object_id });
  if (typeof e === 'string') return { kind: 'invalid', topic, reason: e };
  return { kind: 'config', topic, entities: [e] };
}
