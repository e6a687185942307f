/**
 * A small demo home on an MQTT broker, for the service's simulated mode: a
 * newcomer without devices can say "turn on the kitchen light" at once. It
 * announces, by Home Assistant MQTT discovery (retained), a kitchen light
 * (json schema, brightness and colour), a living-room lamp (default schema),
 * a front-door lock, a thermostat and a temperature sensor, and answers
 * their commands like real devices: by publishing the new state (retained).
 * It has its own MQTT client and client id.
 */
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../kernel/log-types.js';
import { parseJson } from '../kernel/json.js';

/** Options of DemoHomeSimulator. */
export interface DemoHomeOptions {
  /** Broker URL, e.g. mqtt://127.0.0.1:1883. */
  url: string;
  username?: string;
  password?: string;
  /** HA discovery prefix (default 'homeassistant'). */
  discoveryPrefix?: string;
  /** Base topic of the demo devices (default 'demo_home'). */
  baseTopic?: string;
  log?: Logger;
}

type Json = Record<string, unknown>;

/** The discovery node id of the demo's configs (`homeassistant/<component>/${DEMO_NODE}/<object>/config`). */
export const DEMO_NODE = 'demo_home';

/** See module comment. */
export class DemoHomeSimulator {
  private client: MqttClient | undefined;
  private readonly base: string;
  private readonly prefix: string;
  private readonly state = {
    kitchen: { state: 'OFF', brightness: 255, color_mode: 'rgb', color: { r: 255, g: 255, b: 255 } } as Json,
    lamp: 'OFF',
    lampBrightness: 128,
    lock: 'LOCKED',
    target: 21,
    mode: 'heat',
    current: 20.5,
  };

  constructor(private readonly opts: DemoHomeOptions) {
    this.base = opts.baseTopic ?? 'demo_home';
    this.prefix = opts.discoveryPrefix ?? 'homeassistant';
  }

  /** The discovery configs (topic -> payload object) the demo announces. */
  discovery(): Array<{ topic: string; payload: Json }> {
    const b = this.base;
    const dev = (id: string, name: string, area: string): Json => ({ ids: [`demo_${id}`], name, mf: 'HomeAgent demo', sa: area });
    const avty = { avty_t: `${b}/availability` };
    return [
      { topic: `${this.prefix}/light/${DEMO_NODE}/kitchen_light/config`, payload: { '~': `${b}/kitchen_light`, name: 'Kitchen Light', uniq_id: 'demo_kitchen_light', schema: 'json', cmd_t: '~/set', stat_t: '~/state', brightness: true, sup_clrm: ['rgb'], ...avty, dev: dev('kitchen_light', 'Kitchen Light', 'Kitchen') } },
      { topic: `${this.prefix}/light/${DEMO_NODE}/living_room_lamp/config`, payload: { '~': `${b}/living_room_lamp`, name: 'Living Room Lamp', uniq_id: 'demo_living_room_lamp', cmd_t: '~/set', stat_t: '~/state', bri_cmd_t: '~/brightness/set', bri_stat_t: '~/brightness', ...avty, dev: dev('living_room_lamp', 'Living Room Lamp', 'Living Room') } },
      { topic: `${this.prefix}/lock/${DEMO_NODE}/front_door/config`, payload: { '~': `${b}/front_door`, name: 'Front Door', uniq_id: 'demo_front_door', cmd_t: '~/set', stat_t: '~/state', ...avty, dev: dev('front_door', 'Front Door', 'Hallway') } },
      { topic: `${this.prefix}/climate/${DEMO_NODE}/thermostat/config`, payload: { '~': `${b}/thermostat`, name: 'Thermostat', uniq_id: 'demo_thermostat', curr_temp_t: '~/current', temp_cmd_t: '~/target/set', temp_stat_t: '~/target', mode_cmd_t: '~/mode/set', mode_stat_t: '~/mode', modes: ['off', 'heat', 'cool', 'auto'], temp_unit: 'C', ...avty, dev: dev('thermostat', 'Thermostat', 'Living Room') } },
      { topic: `${this.prefix}/sensor/${DEMO_NODE}/bedroom_temperature/config`, payload: { name: 'Bedroom Temperature', uniq_id: 'demo_bedroom_temperature', stat_t: `${b}/bedroom/sensor`, val_tpl: '{{ value_json.temperature }}', unit_of_meas: '°C', dev_cla: 'temperature', ...avty, dev: dev('bedroom_sensor', 'Bedroom Sensor', 'Bedroom') } },
    ];
  }

  /** Connect, announce the home and start answering commands. Rejects when the broker cannot be reached. */
  async start(): Promise<void> {
    const b = this.base;
    this.client = await mqtt.connectAsync(this.opts.url, {
      clientId: `homeagent-demo-${randomBytes(4).toString('hex')}`,
      ...(this.opts.username ? { username: this.opts.username } : {}),
      ...(this.opts.password ? { password: this.opts.password } : {}),
      will: { topic: `${b}/availability`, payload: Buffer.from('offline'), qos: 1, retain: true },
      reconnectPeriod: 1000,
    });
    const c = this.client;
    c.on('message', (topic, payload) => this.onCommand(topic, payload.toString('utf8')));
    c.on('connect', () => void this.announce());
    await c.subscribeAsync([`${b}/+/set`, `${b}/+/+/set`], { qos: 1 });
    await this.announce();
    this.opts.log?.info({ url: this.opts.url }, 'demo home announced');
  }

  private async announce(): Promise<void> {
    const c = this.client;
    if (!c) return;
    const b = this.base;
    for (const d of this.discovery()) await c.publishAsync(d.topic, JSON.stringify(d.payload), { retain: true, qos: 1 });
    const s = this.state;
    const states: Array<[string, string]> = [
      [`${b}/availability`, 'online'],
      [`${b}/kitchen_light/state`, JSON.stringify(s.kitchen)],
      [`${b}/living_room_lamp/state`, s.lamp],
      [`${b}/living_room_lamp/brightness`, String(s.lampBrightness)],
      [`${b}/front_door/state`, s.lock],
      [`${b}/thermostat/current`, String(s.current)],
      [`${b}/thermostat/target`, String(s.target)],
      [`${b}/thermostat/mode`, s.mode],
      [`${b}/bedroom/sensor`, JSON.stringify({ temperature: 19.5, humidity: 48 })],
    ];
    for (const [t, p] of states) await c.publishAsync(t, p, { retain: true, qos: 1 });
  }

  private onCommand(topic: string, payload: string): void {
    const c = this.client;
    if (!c) return;
    const b = this.base;
    const s = this.state;
    const pub = (t: string, p: string): void => void c.publish(t, p, { retain: true, qos: 1 });
    switch (topic) {
      case `${b}/kitchen_light/set`: {
        let cmd: unknown;
        try {
          cmd = parseJson(payload);
        } catch {
          return;
        }
        if (!cmd || typeof cmd !== 'object') return;
        s.kitchen = { ...s.kitchen, ...(cmd as Json) };
        pub(`${b}/kitchen_light/state`, JSON.stringify(s.kitchen));
        return;
      }
      case `${b}/living_room_lamp/set`:
        if (payload === 'ON' || payload === 'OFF') {
          s.lamp = payload;
          pub(`${b}/living_room_lamp/state`, payload);
        }
        return;
      case `${b}/living_room_lamp/brightness/set`: {
        const n = Number(payload);
        if (Number.isFinite(n)) {
          s.lampBrightness = n;
          pub(`${b}/living_room_lamp/brightness`, String(n));
        }
        return;
      }
      case `${b}/front_door/set`:
        if (payload === 'LOCK' || payload === 'UNLOCK') {
          s.lock = payload === 'LOCK' ? 'LOCKED' : 'UNLOCKED';
          pub(`${b}/front_door/state`, s.lock);
        }
        return;
      case `${b}/thermostat/target/set`: {
        const n = Number(payload);
        if (Number.isFinite(n)) {
          s.target = n;
          pub(`${b}/thermostat/target`, String(n));
        }
        return;
      }
      case `${b}/thermostat/mode/set`:
        s.mode = payload;
        pub(`${b}/thermostat/mode`, payload);
        return;
      default:
        return;
    }
  }

  /** Mark the demo home offline and disconnect. */
  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (!c) return;
    if (c.connected) await c.publishAsync(`${this.base}/availability`, 'offline', { retain: true, qos: 1 }).catch(() => undefined);
    await c.endAsync();
  }
}
