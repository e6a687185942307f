/**
 * The settings of the smart-home plugin (plugin.mqtt.* and plugin.home.*):
 * one definition list with types, defaults and descriptions, registered at
 * start (seed 000 §10 `Register(key, default)`).
 */
import type { SettingDef } from '../kernel/settings-types.js';
import { REPORT_TIMEOUT_MIN_MS, REPORT_TIMEOUT_MS } from './report-watch.js';

/**
 * How long the broker may have been out of reach before a command fails at
 * once instead of waiting for the reconnect (MqttClient.publishCommand), ms:
 * plugin.mqtt.broker_down_fail_ms's default.
 * Long enough for mqtt.js's first reconnect after a dropped connection
 * (its pause starts at a second), short enough that nobody waits on a
 * broker that is down.
 */
export const BROKER_DOWN_FAIL_MS = 3_000;

/** Every setting HomePlugin registers. */
export const HOME_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.mqtt.url', type: 'string', default: '', url: { schemes: ['mqtt', 'mqtts', 'ws', 'wss'], allowEmpty: true }, restart: true, description: "MQTT broker URL (mqtt://, mqtts://, ws://, wss://); empty: the box's embedded broker on 127.0.0.1:1883 (or a broker already listening there)." },
  { key: 'plugin.mqtt.username', type: 'string', default: '', restart: true, description: 'MQTT user name; empty for anonymous.' },
  { key: 'plugin.mqtt.password', type: 'secret', default: '', restart: true, description: 'MQTT password.' },
  { key: 'plugin.mqtt.tls', type: 'json', default: {}, restart: true, check: (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? undefined : 'must be an object: {"ca": ..., "cert": ..., "key": ..., "rejectUnauthorized": true}'), description: 'TLS options {ca, cert, key, rejectUnauthorized}; ca/cert/key are PEM text or file paths. Empty: TLS only when the URL is mqtts://.' },
  { key: 'plugin.mqtt.client_id', type: 'string', default: '', restart: true, description: 'MQTT client id; empty: generated once per box and kept in the data directory.' },
  { key: 'plugin.mqtt.base_topic', type: 'string', default: 'homeagent', restart: true, description: "Base topic of the box's own topics (availability, assistant state, stop, volume)." },
  { key: 'plugin.mqtt.command_timeout_ms', type: 'integer', default: 10000, min: 500, max: 120000, description: 'How long a device command may wait for the broker (also across a reconnect) before it is reported failed, ms.' },
  { key: 'plugin.mqtt.broker_down_fail_ms', type: 'integer', default: BROKER_DOWN_FAIL_MS, min: 0, max: 120000, description: 'A device command given when the broker has been out of reach this long fails at once, sending nothing ("the MQTT broker is unreachable"), instead of waiting command_timeout_ms for the reconnect; a shorter drop waits, ms.' },
  { key: 'plugin.mqtt.reconnect_max_ms', type: 'integer', default: 2000, restart: true, min: 500, max: 600000, description: 'Longest pause between reconnect attempts, ms (backoff doubles from 500 ms up to this, with jitter): the box is back within about this long of the broker returning.' },
  { key: 'plugin.home.discovery_prefix', type: 'string', default: 'homeassistant', restart: true, description: 'Home Assistant MQTT discovery prefix.' },
  { key: 'plugin.home.z2m_prefix', type: 'string', default: 'zigbee2mqtt', restart: true, description: 'zigbee2mqtt base topic.' },
  // A list of names, refused otherwise: a tester's '"TV"' (a string) and '[null]' were taken and protected nothing.
  { key: 'plugin.home.risky_devices', type: 'json', default: [], check: (v) => (Array.isArray(v) && v.every((x) => typeof x === 'string' && x.trim() !== '') ? undefined : 'must be a list of device names or ids, e.g. ["Front Door", "tv"]'), description: 'Device ids or names whose every command needs a spoken yes (besides unlocking, garage doors and alarms).' },
  {
    key: 'plugin.home.report_timeout_ms',
    type: 'integer',
    default: REPORT_TIMEOUT_MS,
    min: 0,
    max: 600000,
    // A device answers over the broker in tens of milliseconds at best: under half a second every command would be said unreported.
    check: (v) => (typeof v === 'number' && v > 0 && v < REPORT_TIMEOUT_MIN_MS ? `must be 0 (not watched) or at least ${REPORT_TIMEOUT_MIN_MS} ms: a device cannot report back sooner, and every command would be said to have gone unreported` : undefined),
    description: `How long a device that reports its state (it has a state topic and is not optimistic) has to report after a command the broker took, ms; when it stays silent the box says so where the command came from ("I asked to turn on the Kitchen Light, but it has not reported back, so it may not have happened."). 0: not watched; otherwise at least ${REPORT_TIMEOUT_MIN_MS}.`,
  },
  { key: 'plugin.home.confirm_timeout_ms', type: 'integer', default: 15000, min: 1000, max: 300000, description: 'How long the box waits for a yes before a risky action counts as refused, ms.' },
  { key: 'plugin.home.local_intents', type: 'boolean', default: true, description: 'Answer device commands, timers, time and date locally without the LLM.' },
  { key: 'plugin.home.area', type: 'string', default: '', description: 'The room the box stands in: "turn off the lights" without a room addresses its lights; empty: every light of the home.' },
  { key: 'plugin.home.time_zone', type: 'string', default: '', description: 'IANA time zone for spoken time and date; empty: the system time zone.' },
  { key: 'plugin.home.max_payload_bytes', type: 'integer', default: 262144, min: 1024, max: 16777216, description: 'Largest MQTT payload the registry accepts; bigger ones are logged and ignored, bytes.' },
  { key: 'plugin.home.announce', type: 'boolean', default: true, description: 'Announce the box in Home Assistant (stop button, state, last transcript, volume).' },
  { key: 'plugin.home.box_name', type: 'string', default: 'HomeAgent', description: 'Device name of the box in Home Assistant.' },
];
