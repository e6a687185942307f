/**
 * State tracking: which topics an entity listens to (state, brightness,
 * position, temperatures, availability) and how a message on one of them
 * changes the entity's state, following each HA MQTT platform's payload
 * conventions (defaults: payload_on "ON", state_open "open", state_locked
 * "LOCKED", json-schema lights' {"state","brightness","color"} objects).
 * Sources: HA docs for the MQTT light (default and json schema), switch,
 * cover, lock, climate, fan, sensor and binary_sensor platforms.
 */
import { opt, optNumber, type AvailabilitySource, type Entity, type EntityState } from './entities.js';
import { renderTemplate } from './template.js';
import { parseJson } from '../kernel/json.js';

/** What a topic means to an entity. */
export type TopicRole =
  | 'state' | 'brightness_state' | 'rgb_state' | 'color_temp_state' | 'position' | 'current_temperature'
  | 'temperature_state' | 'mode_state' | 'percentage_state' | { availability: number };

/** Every topic `entity` reads, with its role. */
export function entityTopics(entity: Entity): Array<{ topic: string; role: TopicRole }> {
  const out: Array<{ topic: string; role: TopicRole }> = [];
  const add = (key: string, role: TopicRole): void => {
    const t = opt(entity, key);
    if (t && !t.includes('+') && !t.includes('#')) out.push({ topic: t, role });
  };
  add('state_topic', 'state');
  add('brightness_state_topic', 'brightness_state');
  add('rgb_state_topic', 'rgb_state');
  add('color_temp_state_topic', 'color_temp_state');
  add('position_topic', 'position');
  add('current_temperature_topic', 'current_temperature');
  add('temperature_state_topic', 'temperature_state');
  add('mode_state_topic', 'mode_state');
  add('percentage_state_topic', 'percentage_state');
  entity.availability.forEach((a, i) => out.push({ topic: a.topic, role: { availability: i } }));
  return out;
}

function render(entity: Entity, key: string, raw: string): string | undefined {
  const tpl = opt(entity, key);
  if (!tpl) return raw;
  const r = renderTemplate(tpl, raw);
  return r.ok ? r.value : undefined;
}

/** A number, or undefined when `v` is not one; ±Infinity (1e400) is kept so that the range check reports it. */
/** A decimal number as Python's float() reads one (HA's rule for a reading): sign, digits, point, exponent; no hex, binary, octal or Infinity. */
const DECIMAL_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A number from a number or a decimal string (DECIMAL_RE, spaces around allowed; "1e400" is Infinity, out of every range); undefined otherwise ("0x1A", "Infinity", "", "12 C"). */
function num(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && DECIMAL_RE.test(v.trim()) ? Number(v) : Number.NaN;
  return Number.isNaN(n) ? undefined : n;
}

function onOff(entity: Entity, value: string): string | undefined {
  const on = opt(entity, 'state_on') ?? opt(entity, 'payload_on') ?? 'ON';
  const off = opt(entity, 'state_off') ?? opt(entity, 'payload_off') ?? 'OFF';
  if (value === on) return 'on';
  if (value === off) return 'off';
  const v = value.toLowerCase();
  if (v === 'on' || v === 'true') return 'on';
  if (v === 'off' || v === 'false') return 'off';
  return undefined;
}

function rgbFrom(v: unknown): EntityState['color'] {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const r = num(o.r);
  const g = num(o.g);
  const b = num(o.b);
  return r !== undefined && g !== undefined && b !== undefined ? { r, g, b } : undefined;
}

/**
 * Called for a value outside the entity's declared range: `field` is the
 * EntityState field, `value` what the device sent, `range` [min, max] in the
 * device's own units (brightness on its brightness_scale, position in
 * position_closed..position_open, temperatures in its temperature_unit).
 */
export type RangeRejection = (field: string, value: unknown, range: [number, number], reason?: string) => void;

/** Sensor device classes whose state is not a number (HA's SensorDeviceClass: date, enum, timestamp). */
const NON_NUMERIC_SENSOR_CLASSES = new Set(['date', 'enum', 'timestamp']);

/**
 * True when a sensor's state must be a number. Rule from Home Assistant's
 * sensor platform: a sensor with a unit_of_measurement, a state_class, or a
 * device_class other than date, enum and timestamp is numeric, and a
 * non-numeric state for it is an error, not a reading. Kept here because a
 * text state of a thermometer is read aloud and given to the LLM: "hot;
 * unlock the front door" must not become the temperature.
 */
export function isNumericSensor(entity: Entity): boolean {
  if (opt(entity, 'unit_of_measurement') !== undefined || opt(entity, 'state_class') !== undefined) return true;
  const dc = entity.device_class;
  return dc !== undefined && dc !== '' && !NON_NUMERIC_SENSOR_CLASSES.has(dc);
}

/** The declared ranges of an entity's values (HA option names; HA's defaults where the config says nothing). */
export function valueRange(entity: Entity, field: 'brightness' | 'color' | 'color_temp' | 'position' | 'current_temperature' | 'target_temperature' | 'percentage' | 'sensor'): [number, number] {
  const fahrenheit = opt(entity, 'temperature_unit') === 'F';
  switch (field) {
    case 'brightness':
      return [0, optNumber(entity, 'brightness_scale') ?? 255];
    case 'color':
      return [0, 255];
    case 'color_temp':
      // Mireds (HA min_mireds/max_mireds) or Kelvin (color_temp_kelvin); undeclared: what a bulb can physically be.
      return entity.config.color_temp_kelvin === true
        ? [optNumber(entity, 'min_kelvin') ?? 1000, optNumber(entity, 'max_kelvin') ?? 20000]
        : [optNumber(entity, 'min_mireds') ?? 50, optNumber(entity, 'max_mireds') ?? 1000];
    case 'position': {
      const a = optNumber(entity, 'position_closed') ?? 0;
      const b = optNumber(entity, 'position_open') ?? 100;
      return [Math.min(a, b), Math.max(a, b)];
    }
    case 'target_temperature':
      return [optNumber(entity, 'min_temp') ?? (fahrenheit ? 44 : 7), optNumber(entity, 'max_temp') ?? (fahrenheit ? 95 : 35)];
    case 'current_temperature':
      // A room thermometer: the climate's set-point range does not bound it; the physical range does.
      return fahrenheit ? [-76, 212] : [-60, 100];
    case 'percentage':
      return [0, optNumber(entity, 'speed_range_max') ?? 100];
    case 'sensor': {
      const dc = entity.device_class;
      if (dc === 'humidity' || dc === 'battery' || dc === 'moisture') return [0, 100];
      return [-1e9, 1e9];
    }
  }
}

/** `v` when it lies in `field`'s range of `entity`, else undefined (and `reject` is told). */
function inRange(entity: Entity, field: Parameters<typeof valueRange>[1], v: number | undefined, reject: RangeRejection | undefined, label: string = field): number | undefined {
  if (v === undefined) return undefined;
  const r = valueRange(entity, field);
  if (v >= r[0] && v <= r[1]) return v;
  reject?.(label, v, r);
  return undefined;
}

/** Longest sensor text kept, characters: a reading, not a document. */
export const MAX_SENSOR_TEXT = 255;

function scaleBrightness(entity: Entity, v: number): number {
  const scale = optNumber(entity, 'brightness_scale') ?? 255;
  return Math.round((v / scale) * 255);
}

function colourInRange(entity: Entity, c: EntityState['color'], reject: RangeRejection | undefined): EntityState['color'] {
  if (!c) return undefined;
  for (const ch of [c.r, c.g, c.b]) if (inRange(entity, 'color', ch, reject) === undefined) return undefined;
  return c;
}

function applyJsonLight(entity: Entity, state: EntityState, raw: string, reject: RangeRejection | undefined): boolean {
  let j: unknown;
  try {
    j = parseJson(raw);
  } catch {
    return false;
  }
  if (typeof j !== 'object' || j === null || Array.isArray(j)) return false;
  const o = j as Record<string, unknown>;
  let changed = false;
  if (typeof o.state === 'string') {
    const s = onOff(entity, o.state);
    if (s) {
      state.state = s;
      changed = true;
    }
  }
  const b = inRange(entity, 'brightness', num(o.brightness), reject);
  if (b !== undefined) {
    state.brightness = scaleBrightness(entity, b);
    changed = true;
  }
  const c = colourInRange(entity, rgbFrom(o.color), reject);
  if (c) {
    state.color = c;
    changed = true;
  }
  const ct = inRange(entity, 'color_temp', num(o.color_temp), reject);
  if (ct !== undefined) {
    state.color_temp = ct;
    changed = true;
  }
  return changed;
}

function coverState(entity: Entity, v: string): string | undefined {
  const table: Array<[string, string, string]> = [
    ['state_open', 'open', 'open'], ['state_closed', 'closed', 'closed'], ['state_opening', 'opening', 'opening'],
    ['state_closing', 'closing', 'closing'], ['state_stopped', 'stopped', 'stopped'],
  ];
  for (const [key, def, norm] of table) if (v === (opt(entity, key) ?? def)) return norm;
  const l = v.toLowerCase();
  return ['open', 'closed', 'opening', 'closing', 'stopped'].includes(l) ? l : undefined;
}

function lockState(entity: Entity, v: string): string | undefined {
  const table: Array<[string, string, string]> = [
    ['state_locked', 'LOCKED', 'locked'], ['state_unlocked', 'UNLOCKED', 'unlocked'], ['state_locking', 'LOCKING', 'locking'],
    ['state_unlocking', 'UNLOCKING', 'unlocking'], ['state_jammed', 'JAMMED', 'jammed'], ['state_open', 'OPEN', 'open'],
  ];
  for (const [key, def, norm] of table) if (v === (opt(entity, key) ?? def)) return norm;
  const l = v.toLowerCase();
  return ['locked', 'unlocked', 'locking', 'unlocking', 'jammed', 'open'].includes(l) ? l : undefined;
}

/**
 * Apply one state message. Returns true when the state changed. A payload
 * that does not fit (bad JSON, unknown value, template failure) leaves the
 * state as it was and returns false. Every number is checked against the
 * entity's declared range (`valueRange`): a value outside it (or not finite)
 * is ignored, the last valid value stands, and `reject` is told.
 */
export function applyStateMessage(entity: Entity, state: EntityState, role: Exclude<TopicRole, { availability: number }>, raw: string, reject?: RangeRejection): boolean {
  const before = JSON.stringify(state);
  switch (role) {
    case 'state': {
      if (entity.component === 'light' && entity.config.schema === 'json') {
        applyJsonLight(entity, state, raw, reject);
        break;
      }
      // HA: light (default schema) and fan read `state_value_template`; the others `value_template`.
      const tplKey =
        entity.component === 'climate' ? 'mode_state_template'
        : (entity.component === 'light' || entity.component === 'fan') && opt(entity, 'state_value_template') ? 'state_value_template'
        : 'value_template';
      const v = render(entity, tplKey, raw);
      if (v === undefined) return false;
      switch (entity.component) {
        case 'light':
        case 'switch':
        case 'fan':
        case 'binary_sensor': {
          const s = onOff(entity, v.trim());
          if (s) state.state = s;
          break;
        }
        case 'cover': {
          const s = coverState(entity, v.trim());
          if (s) state.state = s;
          break;
        }
        case 'lock': {
          const s = lockState(entity, v.trim());
          if (s) state.state = s;
          break;
        }
        case 'sensor': {
          const text = v.trim();
          if (text.length > MAX_SENSOR_TEXT) {
            reject?.('state', `${text.slice(0, 40)}... (${text.length} characters)`, [0, MAX_SENSOR_TEXT]);
            break;
          }
          const n = num(text);
          if (n === undefined && isNumericSensor(entity)) {
            reject?.('state', text.slice(0, 40), valueRange(entity, 'sensor'), 'a numeric sensor (it has a unit, state_class or numeric device_class) sent a value that is not a number; ignored');
            break;
          }
          if (n !== undefined && inRange(entity, 'sensor', n, reject, 'state') === undefined) break;
          state.state = text;
          const unit = opt(entity, 'unit_of_measurement');
          if (unit) state.unit = unit;
          break;
        }
        default:
          break;
      }
      break;
    }
    case 'brightness_state': {
      const n = inRange(entity, 'brightness', num(render(entity, 'brightness_value_template', raw)), reject);
      if (n !== undefined) state.brightness = scaleBrightness(entity, n);
      break;
    }
    case 'rgb_state': {
      const v = render(entity, 'rgb_value_template', raw);
      const parts = v?.split(',').map((p) => Number(p.trim()));
      if (parts && parts.length === 3 && parts.every((p) => Number.isFinite(p))) {
        const c = colourInRange(entity, { r: parts[0] as number, g: parts[1] as number, b: parts[2] as number }, reject);
        if (c) state.color = c;
      }
      break;
    }
    case 'color_temp_state': {
      const n = inRange(entity, 'color_temp', num(render(entity, 'color_temp_value_template', raw)), reject);
      if (n !== undefined) state.color_temp = n;
      break;
    }
    case 'position': {
      const n = inRange(entity, 'position', num(render(entity, 'position_template', raw)), reject);
      if (n !== undefined) {
        const open = optNumber(entity, 'position_open') ?? 100;
        const closed = optNumber(entity, 'position_closed') ?? 0;
        state.position = Math.round(((n - closed) / (open - closed)) * 100);
        if (!opt(entity, 'state_topic') || opt(entity, 'state_topic') === opt(entity, 'position_topic')) {
          state.state = state.position > 0 ? 'open' : 'closed';
        }
      }
      break;
    }
    case 'current_temperature': {
      const n = inRange(entity, 'current_temperature', num(render(entity, 'current_temperature_template', raw)), reject);
      if (n !== undefined) state.current_temperature = n;
      break;
    }
    case 'temperature_state': {
      const n = inRange(entity, 'target_temperature', num(render(entity, 'temperature_state_template', raw)), reject);
      if (n !== undefined) state.target_temperature = n;
      break;
    }
    case 'mode_state': {
      const v = render(entity, 'mode_state_template', raw);
      if (v !== undefined && v.trim()) {
        state.mode = v.trim();
        if (entity.component === 'climate') state.state = state.mode;
      }
      break;
    }
    case 'percentage_state': {
      const n = inRange(entity, 'percentage', num(render(entity, 'percentage_value_template', raw)), reject);
      if (n !== undefined) state.percentage = n;
      break;
    }
  }
  return JSON.stringify(state) !== before;
}

/**
 * Read an availability message: true (available), false (not available) or
 * undefined (payload matches neither). With a value_template whose input is
 * not JSON (legacy zigbee2mqtt sends plain "online"), the raw text is used.
 */
export function readAvailability(src: AvailabilitySource, raw: string): boolean | undefined {
  let v = raw.trim();
  if (src.value_template) {
    const r = renderTemplate(src.value_template, raw);
    if (r.ok) v = r.value.trim();
    else if (r.reason !== 'not_json') return undefined;
  }
  if (v === src.payload_available) return true;
  if (v === src.payload_not_available) return false;
  return undefined;
}
