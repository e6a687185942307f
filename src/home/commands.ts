/**
 * Device commands: turn a requested action into the exact MQTT messages the
 * entity's platform expects (sources: HA MQTT light docs, default and json
 * schema; switch, cover, lock, climate, fan, scene, button docs; zigbee2mqtt
 * "MQTT topics and messages" for /set payloads). Pure: no IO here.
 */
import { opt, optNumber, type Entity, type EntityState, type Rgb } from './entities.js';
import { HomeError } from './errors.js';
import { renderCommandTemplate } from './template.js';

/** Actions device_control and the local intents can request. */
export const ACTIONS = [
  'turn_on', 'turn_off', 'toggle', 'open', 'close', 'stop', 'set_position', 'lock', 'unlock',
  'set_temperature', 'set_mode', 'press', 'activate', 'set_percentage',
] as const;
/** One of ACTIONS. */
export type ActionName = (typeof ACTIONS)[number];

/**
 * A requested action. `brightness_pct` 0-100 (%), `color` RGB 0-255,
 * `color_temp` mireds, `position` 0-100 (% open), `temperature` in the
 * entity's unit, `percentage` 0-100 (fan speed).
 */
export interface DeviceAction {
  action: ActionName;
  brightness_pct?: number;
  color?: Rgb;
  color_temp?: number;
  position?: number;
  temperature?: number;
  mode?: string;
  percentage?: number;
}

/** One MQTT message to publish. */
export interface MqttCommand {
  topic: string;
  payload: string;
  /** Always at least 1 (commands are QoS 1). */
  qos: 1 | 2;
  retain: boolean;
}

/** Which actions a component accepts (generic turn_on/turn_off are mapped per component). */
export function supportedActions(entity: Entity): ActionName[] {
  switch (entity.component) {
    case 'light':
    case 'switch':
      return ['turn_on', 'turn_off', 'toggle'];
    case 'fan':
      return ['turn_on', 'turn_off', 'toggle', 'set_percentage'];
    case 'cover':
      return ['open', 'close', 'stop', 'set_position'];
    case 'lock':
      return ['lock', 'unlock'];
    case 'climate':
      return ['set_temperature', 'set_mode', 'turn_off', 'turn_on'];
    case 'scene':
      return ['activate'];
    case 'button':
      return ['press'];
    default:
      return [];
  }
}

/**
 * Map generic verbs onto the component's own (HA intent semantics: HassTurnOn
 * on a lock locks it, on a cover opens it, on a scene activates it, on a
 * button presses it; HassTurnOff unlocks / closes).
 */
export function normaliseAction(entity: Entity, action: ActionName): ActionName {
  const c = entity.component;
  if (c === 'lock') return action === 'turn_on' ? 'lock' : action === 'turn_off' ? 'unlock' : action;
  if (c === 'cover') return action === 'turn_on' ? 'open' : action === 'turn_off' ? 'close' : action;
  if (c === 'scene' && (action === 'turn_on' || action === 'press')) return 'activate';
  if (c === 'button' && (action === 'turn_on' || action === 'activate')) return 'press';
  return action;
}

function unsupported(entity: Entity, what: string): HomeError {
  return new HomeError('UNSUPPORTED_ACTION', `${entity.name} (${entity.component}) cannot ${what}`);
}

function payloadOpt(entity: Entity, key: string, def: string): string | undefined {
  const v = entity.config[key];
  if (v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return def;
}

function fmtNumber(n: number): string {
  return String(Math.round(n * 10) / 10);
}

function rgbToXy(c: Rgb): { x: number; y: number } {
  const lin = (v: number): number => {
    const s = v / 255;
    return s > 0.04045 ? ((s + 0.055) / 1.055) ** 2.4 : s / 12.92;
  };
  const r = lin(c.r);
  const g = lin(c.g);
  const b = lin(c.b);
  const X = r * 0.4124 + g * 0.3576 + b * 0.1805;
  const Y = r * 0.2126 + g * 0.7152 + b * 0.0722;
  const Z = r * 0.0193 + g * 0.1192 + b * 0.9505;
  const sum = X + Y + Z || 1;
  return { x: Math.round((X / sum) * 1000) / 1000, y: Math.round((Y / sum) * 1000) / 1000 };
}

function rgbToHs(c: Rgb): { h: number; s: number } {
  const r = c.r / 255;
  const g = c.g / 255;
  const b = c.b / 255;
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  let h = 0;
  if (d !== 0) {
    if (max === r) h = ((g - b) / d) % 6;
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
  }
  h = Math.round(((h * 60) + 360) % 360);
  const s = max === 0 ? 0 : Math.round((d / max) * 100);
  return { h, s };
}

function colorModes(entity: Entity): string[] {
  const m = entity.config.supported_color_modes;
  const modes = Array.isArray(m) ? m.filter((x): x is string => typeof x === 'string') : [];
  if (entity.config.rgb === true) modes.push('rgb');
  return modes;
}

function withTemplate(entity: Entity, key: string, value: string | number): string {
  const tpl = opt(entity, key);
  if (!tpl) return String(value);
  const out = renderCommandTemplate(tpl, value);
  if (out === undefined) throw new HomeError('UNSUPPORTED_ACTION', `${entity.name}: ${key} uses a template the box cannot render`);
  return out;
}

function lightCommands(entity: Entity, a: DeviceAction, state: EntityState): Array<[string, string]> {
  const cmd = opt(entity, 'command_topic');
  if (!cmd) throw unsupported(entity, 'be commanded (no command_topic)');
  const scale = optNumber(entity, 'brightness_scale') ?? 255;
  // Brightness 0 is off, whatever the schema (Home Assistant's light.turn_on with brightness 0 turns the light off):
  // the default schema sent brightness 0 and then "ON", the json one "OFF". Any other brightness is at least 1 on the
  // light's scale, as Home Assistant's MQTT light keeps it ("not rounded down to 0"): 4 % of a scale of 10 switched a
  // breaking tester's light off while the box said "Set ... to 4 percent".
  const dark = a.brightness_pct !== undefined && a.brightness_pct <= 0;
  const level = (pct: number): number => Math.max(1, Math.round((Math.min(100, pct) * scale) / 100));
  const on = !dark && (a.action === 'turn_on' || (a.action === 'toggle' && state.state !== 'on'));
  const modes = colorModes(entity);
  if (entity.config.schema === 'json') {
    const body: Record<string, unknown> = { state: on ? 'ON' : 'OFF' };
    if (on && a.brightness_pct !== undefined) {
      if (entity.config.brightness !== true) throw unsupported(entity, 'dim');
      body.brightness = level(a.brightness_pct);
    }
    if (on && a.color) {
      if (modes.some((m) => m === 'rgb' || m === 'rgbw' || m === 'rgbww')) body.color = { ...a.color };
      else if (modes.includes('xy')) body.color = rgbToXy(a.color);
      else if (modes.includes('hs')) body.color = rgbToHs(a.color);
      else throw unsupported(entity, 'change colour');
    }
    if (on && a.color_temp !== undefined) {
      if (!modes.includes('color_temp')) throw unsupported(entity, 'change colour temperature');
      body.color_temp = Math.round(a.color_temp);
    }
    return [[cmd, JSON.stringify(body)]];
  }
  const out: Array<[string, string]> = [];
  const pOn = payloadOpt(entity, 'payload_on', 'ON') ?? 'ON';
  const pOff = payloadOpt(entity, 'payload_off', 'OFF') ?? 'OFF';
  if (!on) return [[cmd, pOff]];
  if (a.brightness_pct !== undefined) {
    const bt = opt(entity, 'brightness_command_topic');
    if (!bt) throw unsupported(entity, 'dim');
    out.push([bt, withTemplate(entity, 'brightness_command_template', level(a.brightness_pct))]);
  }
  if (a.color) {
    const ct = opt(entity, 'rgb_command_topic');
    if (!ct) throw unsupported(entity, 'change colour');
    out.push([ct, withTemplate(entity, 'rgb_command_template', `${a.color.r},${a.color.g},${a.color.b}`)]);
  }
  if (a.color_temp !== undefined) {
    const tt = opt(entity, 'color_temp_command_topic');
    if (!tt) throw unsupported(entity, 'change colour temperature');
    out.push([tt, withTemplate(entity, 'color_temp_command_template', Math.round(a.color_temp))]);
  }
  const onType = opt(entity, 'on_command_type') ?? 'last';
  if (onType === 'brightness' && a.brightness_pct !== undefined) return out;
  if (onType === 'first') return [[cmd, pOn], ...out];
  return [...out, [cmd, pOn]];
}

/**
 * The messages for `action` on `entity` (given its current `state`, needed
 * for toggle). Throws HomeError UNSUPPORTED_ACTION (the component cannot do
 * it) or BAD_ARGUMENT (missing/out-of-range value).
 */
export function buildCommands(entity: Entity, action: DeviceAction, state: EntityState = {}): MqttCommand[] {
  const a: DeviceAction = { ...action, action: normaliseAction(entity, action.action) };
  if (!supportedActions(entity).includes(a.action)) throw unsupported(entity, a.action.replace(/_/g, ' '));
  const qosOpt = optNumber(entity, 'qos');
  const qos: 1 | 2 = qosOpt === 2 ? 2 : 1;
  const retain = entity.config.retain === true;
  const cmdTopic = opt(entity, 'command_topic');
  const need = (t: string | undefined, what: string): string => {
    if (!t) throw unsupported(entity, what);
    return t;
  };
  let pairs: Array<[string, string]>;
  switch (entity.component) {
    case 'light':
      pairs = lightCommands(entity, a, state);
      break;
    case 'switch':
    case 'fan': {
      if (a.action === 'set_percentage') {
        if (a.percentage === undefined || a.percentage < 0 || a.percentage > 100) throw new HomeError('BAD_ARGUMENT', 'percentage must be 0-100');
        pairs = [[need(opt(entity, 'percentage_command_topic'), 'set a speed'), withTemplate(entity, 'percentage_command_template', Math.round(a.percentage))]];
        break;
      }
      const on = a.action === 'turn_on' || (a.action === 'toggle' && state.state !== 'on');
      const p = on ? payloadOpt(entity, 'payload_on', 'ON') : payloadOpt(entity, 'payload_off', 'OFF');
      pairs = [[need(cmdTopic, 'be switched'), withTemplate(entity, 'command_template', p ?? (on ? 'ON' : 'OFF'))]];
      break;
    }
    case 'cover': {
      if (a.action === 'set_position') {
        if (a.position === undefined || a.position < 0 || a.position > 100) throw new HomeError('BAD_ARGUMENT', 'position must be 0-100 (% open)');
        const open = optNumber(entity, 'position_open') ?? 100;
        const closed = optNumber(entity, 'position_closed') ?? 0;
        const v = Math.round(closed + ((open - closed) * a.position) / 100);
        pairs = [[need(opt(entity, 'set_position_topic'), 'move to a position'), withTemplate(entity, 'set_position_template', v)]];
        break;
      }
      const key = a.action === 'open' ? 'payload_open' : a.action === 'close' ? 'payload_close' : 'payload_stop';
      const p = payloadOpt(entity, key, a.action === 'open' ? 'OPEN' : a.action === 'close' ? 'CLOSE' : 'STOP');
      if (p === undefined) throw unsupported(entity, a.action);
      pairs = [[need(cmdTopic, a.action), withTemplate(entity, 'command_template', p)]];
      break;
    }
    case 'lock': {
      const p = a.action === 'lock' ? payloadOpt(entity, 'payload_lock', 'LOCK') : payloadOpt(entity, 'payload_unlock', 'UNLOCK');
      pairs = [[need(cmdTopic, a.action), withTemplate(entity, 'command_template', p ?? '')]];
      break;
    }
    case 'climate': {
      if (a.action === 'set_temperature') {
        if (a.temperature === undefined || !Number.isFinite(a.temperature)) throw new HomeError('BAD_ARGUMENT', 'temperature is required');
        const min = optNumber(entity, 'min_temp') ?? (opt(entity, 'temperature_unit') === 'F' ? 44 : 7);
        const max = optNumber(entity, 'max_temp') ?? (opt(entity, 'temperature_unit') === 'F' ? 95 : 35);
        if (a.temperature < min || a.temperature > max) throw new HomeError('BAD_ARGUMENT', `temperature must be between ${min} and ${max}`);
        pairs = [[need(opt(entity, 'temperature_command_topic'), 'set a temperature'), withTemplate(entity, 'temperature_command_template', fmtNumber(a.temperature))]];
        break;
      }
      const modes = Array.isArray(entity.config.modes) ? entity.config.modes.filter((m): m is string => typeof m === 'string') : [];
      let mode = a.mode;
      if (a.action === 'turn_off') mode = 'off';
      if (a.action === 'turn_on') {
        const power = opt(entity, 'power_command_topic');
        if (power) {
          pairs = [[power, payloadOpt(entity, 'payload_on', 'ON') ?? 'ON']];
          break;
        }
        mode = modes.find((m) => m === 'auto' || m === 'heat' || m === 'cool') ?? undefined;
      }
      if (!mode) throw new HomeError('BAD_ARGUMENT', 'mode is required');
      if (modes.length && !modes.includes(mode)) throw new HomeError('BAD_ARGUMENT', `${entity.name} supports the modes ${modes.join(', ')}`);
      pairs = [[need(opt(entity, 'mode_command_topic'), 'change mode'), withTemplate(entity, 'mode_command_template', mode)]];
      break;
    }
    case 'scene':
      pairs = [[need(cmdTopic, 'be activated'), payloadOpt(entity, 'payload_on', 'ON') ?? 'ON']];
      break;
    case 'button':
      pairs = [[need(cmdTopic, 'be pressed'), withTemplate(entity, 'command_template', payloadOpt(entity, 'payload_press', 'PRESS') ?? 'PRESS')]];
      break;
    default:
      throw unsupported(entity, a.action);
  }
  return pairs.map(([topic, payload]) => ({ topic, payload, qos, retain }));
}
