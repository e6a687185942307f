/**
 * zigbee2mqtt: turn the retained `<prefix>/bridge/devices` list into entities
 * described in HA option names, the way zigbee2mqtt's own HA integration
 * describes them (source: zigbee2mqtt docs "MQTT topics and messages" and
 * "Exposes"; lib/extension/homeassistant.ts). A device's base topic is
 * `<prefix>/<friendly_name>` (names may contain spaces and slashes); commands
 * go to `<base>/set` as JSON with "ON"/"OFF" strings; `<base>/availability`
 * carries {"state":"online"|"offline"}; `<prefix>/bridge/...` is the bridge
 * itself and never a device. The coordinator is not a device either.
 */
import { MAX_NAME_LENGTH, TOPIC_TEXT_RE } from './discovery-schema.js';
import { findIeee, nameAliases, type AvailabilitySource, type Component, type Entity } from './entities.js';
import { parseJson } from '../kernel/json.js';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface Feature {
  type: string;
  name?: string;
  property?: string;
  access?: number;
  value_on?: unknown;
  value_off?: unknown;
  value_min?: number;
  value_max?: number;
  unit?: string;
  features?: Feature[];
}

function asFeature(v: unknown): Feature | undefined {
  if (!isObject(v) || typeof v.type !== 'string') return undefined;
  const f: Feature = { type: v.type };
  if (typeof v.name === 'string') f.name = v.name;
  if (typeof v.property === 'string') f.property = v.property;
  if (typeof v.access === 'number') f.access = v.access;
  if ('value_on' in v) f.value_on = v.value_on;
  if ('value_off' in v) f.value_off = v.value_off;
  if (typeof v.value_min === 'number') f.value_min = v.value_min;
  if (typeof v.value_max === 'number') f.value_max = v.value_max;
  if (typeof v.unit === 'string') f.unit = v.unit;
  if (Array.isArray(v.features)) f.features = v.features.map(asFeature).filter((x): x is Feature => !!x);
  return f;
}

const SENSOR_CLASSES: Readonly<Record<string, string>> = {
  temperature: 'temperature', local_temperature: 'temperature', humidity: 'humidity', pressure: 'pressure',
  illuminance: 'illuminance', illuminance_lux: 'illuminance', battery: 'battery', power: 'power',
  energy: 'energy', voltage: 'voltage', current: 'current', co2: 'carbon_dioxide', pm25: 'pm25',
};
const BINARY_CLASSES: Readonly<Record<string, string>> = {
  contact: 'door', occupancy: 'occupancy', water_leak: 'moisture', smoke: 'smoke', vibration: 'vibration', presence: 'presence',
};

function lit(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A device of bridge/devices, reduced to what the registry needs. */
export interface Z2mDevice {
  ieee: string;
  friendly_name: string;
  manufacturer?: string;
  model?: string;
  description?: string;
  entities: Entity[];
}

/**
 * Parse the bridge/devices payload (a JSON array). Returns the devices with
 * their derived entities, or a reason string when the payload is malformed.
 */
export function parseBridgeDevices(payload: string, prefix: string): Z2mDevice[] | string {
  let raw: unknown;
  try {
    raw = parseJson(payload);
  } catch (err) {
    return `bridge/devices is not JSON (${(err as Error).message})`;
  }
  if (!Array.isArray(raw)) return 'bridge/devices is not a list';
  const out: Z2mDevice[] = [];
  for (const d of raw) {
    if (!isObject(d)) continue;
    if (d.type === 'Coordinator') continue;
    const friendly = typeof d.friendly_name === 'string' ? d.friendly_name : undefined;
    const ieee = findIeee([typeof d.ieee_address === 'string' ? d.ieee_address : undefined]);
    if (!friendly || !ieee) continue;
    // A name is spoken and becomes a topic: bounded, printable, no wildcards (else the device is left out).
    if (friendly.length > MAX_NAME_LENGTH || !TOPIC_TEXT_RE.test(friendly)) continue;
    if (friendly === 'bridge' || friendly.startsWith('bridge/')) continue;
    const def = isObject(d.definition) ? d.definition : {};
    const exposes = Array.isArray(def.exposes) ? def.exposes.map(asFeature).filter((x): x is Feature => !!x) : [];
    const dev: Z2mDevice = {
      ieee,
      friendly_name: friendly,
      manufacturer: typeof def.vendor === 'string' ? def.vendor : undefined,
      model: typeof def.model === 'string' ? def.model : undefined,
      description: typeof d.description === 'string' ? d.description : undefined,
      entities: [],
    };
    dev.entities = exposesToEntities(dev, exposes, prefix);
    out.push(dev);
  }
  return out;
}

function baseEntity(dev: Z2mDevice, prefix: string, component: Component, suffix: string, name: string, config: Json): Entity {
  const base = `${prefix}/${dev.friendly_name}`;
  const availability: AvailabilitySource[] = [
    { topic: `${prefix}/bridge/state`, payload_available: 'online', payload_not_available: 'offline', value_template: '{{ value_json.state }}' },
    { topic: `${base}/availability`, payload_available: 'online', payload_not_available: 'offline', value_template: '{{ value_json.state }}', optional: true },
  ];
  return {
    id: `z2m_${dev.ieee}_${suffix}`,
    component,
    name,
    aliases: nameAliases(name),
    source: 'zigbee2mqtt',
    ieee: dev.ieee,
    device: { id: dev.ieee, identifiers: [`zigbee2mqtt_${dev.ieee}`], name: dev.friendly_name, manufacturer: dev.manufacturer, model: dev.model },
    config: { state_topic: base, ...config },
    availability,
    availability_mode: 'all',
  };
}

function exposesToEntities(dev: Z2mDevice, exposes: Feature[], prefix: string): Entity[] {
  const base = `${prefix}/${dev.friendly_name}`;
  const set = `${base}/set`;
  const entities: Entity[] = [];
  const name = dev.friendly_name;
  for (const e of exposes) {
    const feats = e.features ?? [];
    const byName = (n: string): Feature | undefined => feats.find((f) => f.name === n || f.property === n);
    if (e.type === 'light') {
      const bri = byName('brightness');
      const modes: string[] = [];
      if (byName('color_xy') || byName('color_hs')) modes.push('xy');
      const ct = byName('color_temp');
      if (ct) modes.push('color_temp');
      entities.push(baseEntity(dev, prefix, 'light', 'light', name, {
        schema: 'json', command_topic: set, brightness: !!bri, brightness_scale: bri?.value_max ?? 254,
        // The bulb's declared colour-temperature range (exposes value_min/value_max, mireds): states outside it are ignored.
        ...(ct?.value_min !== undefined ? { min_mireds: ct.value_min } : {}),
        ...(ct?.value_max !== undefined ? { max_mireds: ct.value_max } : {}),
        ...(modes.length ? { supported_color_modes: modes } : {}),
      }));
    } else if (e.type === 'switch') {
      const st = byName('state');
      entities.push(baseEntity(dev, prefix, 'switch', 'switch', name, {
        command_topic: set, value_template: `{{ value_json.${st?.property ?? 'state'} }}`,
        payload_on: lit(st?.value_on ?? 'ON'), payload_off: lit(st?.value_off ?? 'OFF'),
        command_template: `{"${st?.property ?? 'state'}": "{{ value }}"}`,
      }));
    } else if (e.type === 'lock') {
      const st = byName('state');
      entities.push(baseEntity(dev, prefix, 'lock', 'lock', name, {
        command_topic: set, value_template: `{{ value_json.${st?.property ?? 'state'} }}`,
        payload_lock: 'LOCK', payload_unlock: 'UNLOCK', state_locked: 'LOCK', state_unlocked: 'UNLOCK',
        command_template: `{"${st?.property ?? 'state'}": "{{ value }}"}`,
      }));
    } else if (e.type === 'cover') {
      const pos = byName('position');
      entities.push(baseEntity(dev, prefix, 'cover', 'cover', name, {
        command_topic: set, value_template: '{{ value_json.state }}', payload_open: 'OPEN', payload_close: 'CLOSE',
        payload_stop: 'STOP', state_open: 'OPEN', state_closed: 'CLOSE', command_template: '{"state": "{{ value }}"}',
        ...(pos ? { position_topic: base, position_template: '{{ value_json.position }}', set_position_topic: set, set_position_template: '{"position": {{ value }}}' } : {}),
      }));
    } else if (e.type === 'climate') {
      const sp = byName('occupied_heating_setpoint') ?? byName('current_heating_setpoint');
      const cur = byName('local_temperature');
      entities.push(baseEntity(dev, prefix, 'climate', 'climate', name, {
        ...(sp ? { temperature_command_topic: set, temperature_command_template: `{"${sp.property ?? sp.name}": {{ value }}}`, temperature_state_topic: base, temperature_state_template: `{{ value_json.${sp.property ?? sp.name} }}` } : {}),
        ...(cur ? { current_temperature_topic: base, current_temperature_template: '{{ value_json.local_temperature }}' } : {}),
        temperature_unit: 'C',
      }));
    } else if (e.type === 'fan') {
      entities.push(baseEntity(dev, prefix, 'fan', 'fan', name, {
        command_topic: set, value_template: '{{ value_json.fan_state }}', command_template: '{"fan_state": "{{ value }}"}',
      }));
    } else if (e.type === 'numeric' && e.property && (e.access ?? 1) & 1 && SENSOR_CLASSES[e.property]) {
      const label = e.property.replace(/_/g, ' ');
      entities.push(baseEntity(dev, prefix, 'sensor', e.property, `${name} ${label}`, {
        value_template: `{{ value_json.${e.property} }}`, unit_of_measurement: e.unit, device_class: SENSOR_CLASSES[e.property],
      }));
      const last = entities[entities.length - 1];
      if (last) last.device_class = SENSOR_CLASSES[e.property];
    } else if (e.type === 'binary' && e.property && BINARY_CLASSES[e.property]) {
      entities.push(baseEntity(dev, prefix, 'binary_sensor', e.property, `${name} ${e.property.replace(/_/g, ' ')}`, {
        value_template: `{{ value_json.${e.property} }}`, payload_on: lit(e.value_on ?? true), payload_off: lit(e.value_off ?? false),
      }));
      const last = entities[entities.length - 1];
      if (last) last.device_class = BINARY_CLASSES[e.property];
    }
  }
  return entities;
}
