/**
 * The entity model of the home: what one controllable or readable thing is
 * (an HA-style entity: component, name, room, topics, availability) and its
 * tracked state. Entities are always described in Home Assistant's own option
 * names (`command_topic`, `payload_on`, `brightness_scale`, ...) whether they
 * came from HA discovery or were derived from zigbee2mqtt's bridge/devices,
 * so one command builder and one state tracker serve both.
 */

/** Components the box understands (HA MQTT platforms). */
export const COMPONENTS = ['light', 'switch', 'cover', 'lock', 'climate', 'fan', 'scene', 'button', 'sensor', 'binary_sensor'] as const;
/** One of COMPONENTS. */
export type Component = (typeof COMPONENTS)[number];

/** True when `c` is a supported component name. */
export function isComponent(c: string): c is Component {
  return (COMPONENTS as readonly string[]).includes(c);
}

/**
 * One availability source (HA `availability` list entry or
 * `availability_topic`): the entity is available on `payload_available`
 * (default "online") and unavailable on `payload_not_available` (default
 * "offline"), after `value_template` is applied. `optional` (zigbee2mqtt
 * per-device availability) means "no message yet" counts as available.
 */
export interface AvailabilitySource {
  topic: string;
  payload_available: string;
  payload_not_available: string;
  value_template?: string;
  optional?: boolean;
}

/** Device info (HA `device` block; zigbee2mqtt bridge/devices entry). */
export interface DeviceInfo {
  /** Stable id: the IEEE address when known, else the first identifier, else the entity id. */
  id: string;
  identifiers: string[];
  name?: string;
  manufacturer?: string;
  model?: string;
  suggested_area?: string;
}

/** Where an entity was announced. */
export type EntitySource = 'discovery' | 'zigbee2mqtt' | 'both';

/** One entity (a light, a lock, a sensor, ...). */
export interface Entity {
  /** Registry id: HA unique_id, or `<component>.<node>_<object>`, or `z2m_<ieee>_<component>[_<property>]`. */
  id: string;
  component: Component;
  /** Spoken name (entity name, or the device name when the entity name is null, as HA does). */
  name: string;
  aliases: string[];
  /** Room: the device's suggested_area. */
  area?: string;
  device_class?: string;
  source: EntitySource;
  /** The discovery config topic, for entities announced by HA discovery. */
  discovery_topic?: string;
  /** zigbee2mqtt IEEE address (0x + 16 hex digits) when the entity is a zigbee device. */
  ieee?: string;
  device: DeviceInfo;
  /** Expanded HA options (full key names, `~` substituted). */
  config: Record<string, unknown>;
  availability: AvailabilitySource[];
  /** HA availability_mode: 'latest' unless the config says 'all' or 'any'; zigbee2mqtt-derived entities use 'all'. */
  availability_mode: 'all' | 'any' | 'latest';
}

/** RGB colour, 0-255 per channel. */
export interface Rgb {
  r: number;
  g: number;
  b: number;
}

/**
 * Tracked state of one entity. `state` is normalised: light/switch/fan/
 * binary_sensor 'on'|'off'; cover 'open'|'closed'|'opening'|'closing'|
 * 'stopped'; lock 'locked'|'unlocked'|'locking'|'unlocking'|'jammed';
 * climate the HVAC mode; sensor the value text. `brightness` is on HA's
 * 0-255 scale; `position` 0-100 (100 open); temperatures in the entity's
 * `temperature_unit` (default °C).
 */
export interface EntityState {
  state?: string;
  brightness?: number;
  color?: Rgb;
  color_temp?: number;
  position?: number;
  current_temperature?: number;
  target_temperature?: number;
  mode?: string;
  percentage?: number;
  /** Sensor unit of measurement. */
  unit?: string;
  /** Last update, ms since epoch. */
  updated_at?: number;
}

/** A string option of an entity's config, if it is a non-empty string. */
export function opt(entity: Pick<Entity, 'config'>, key: string): string | undefined {
  const v = entity.config[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A numeric option of an entity's config, if it is a finite number. */
export function optNumber(entity: Pick<Entity, 'config'>, key: string): number | undefined {
  const v = entity.config[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Find a zigbee IEEE address (0x + 16 hex digits) in any of `texts`. */
export function findIeee(texts: Array<string | undefined>): string | undefined {
  for (const t of texts) {
    const m = t ? /0x[0-9a-fA-F]{16}/.exec(t) : null;
    if (m) return m[0].toLowerCase();
  }
  return undefined;
}

/** Aliases derived from a name: the part after the last '/' for zigbee2mqtt names with slashes ("office/desk lamp" -> "desk lamp"). */
export function nameAliases(name: string): string[] {
  const out: string[] = [];
  if (name.includes('/')) {
    const last = name.split('/').pop()?.trim();
    if (last) out.push(last);
    out.push(name.replace(/\//g, ' ').replace(/\s+/g, ' ').trim());
  }
  if (/[_]/.test(name)) out.push(name.replace(/_/g, ' '));
  return [...new Set(out.filter((a) => a && a !== name))];
}
