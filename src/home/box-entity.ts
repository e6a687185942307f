/**
 * The box itself in Home Assistant, announced by MQTT discovery (HA docs
 * "MQTT Discovery"; button, sensor and number platforms): a Stop button, an
 * assistant-state sensor (ASSISTANT_STATES), the last
 * transcript, a volume number (0-100 %), all with the box's availability
 * topic (retained "online", last will "offline"). Pure: builds topics and
 * payloads; the plugin publishes them and routes the command topics back.
 */
import { ASSISTANT_STATES } from '../kernel/assistant-state.js';

/** Topics of the box (under `<base>/<node>`). */
export interface BoxTopics {
  availability: string;
  stopCommand: string;
  state: string;
  transcript: string;
  volumeState: string;
  volumeCommand: string;
}

/** Topics for box node id `node` under base topic `base` (default "homeagent"). */
export function boxTopics(base: string, node: string): BoxTopics {
  const root = `${base}/${node}`;
  return {
    availability: `${root}/availability`,
    stopCommand: `${root}/stop/press`,
    state: `${root}/assistant_state`,
    transcript: `${root}/last_transcript`,
    volumeState: `${root}/volume`,
    volumeCommand: `${root}/volume/set`,
  };
}

/**
 * The signature every box announces itself with: the HA `device` block's
 * manufacturer and model, and its identifier prefix (`homeagent_<node>`).
 */
export const BOX_DEVICE_SIGNATURE = { manufacturer: 'HomeAgent', model: 'Voice box', identifierPrefix: 'homeagent_' } as const;

/**
 * True when an (abbreviation-expanded) discovery config is one of a
 * HomeAgent box's own entities (boxDiscovery: Stop button, assistant state,
 * last transcript, volume), of this box or another on the same broker. Those
 * are the box's controls for Home Assistant, not devices for a box to
 * control: discovery ignores them. Matches the `device` block's manufacturer
 * and model exactly and at least one identifier with the `homeagent_` prefix.
 */
export function isHomeAgentBoxConfig(cfg: Record<string, unknown>): boolean {
  const device = cfg.device;
  if (!device || typeof device !== 'object' || Array.isArray(device)) return false;
  const d = device as Record<string, unknown>;
  if (d.manufacturer !== BOX_DEVICE_SIGNATURE.manufacturer || d.model !== BOX_DEVICE_SIGNATURE.model) return false;
  const ids = Array.isArray(d.identifiers) ? d.identifiers : [d.identifiers];
  return ids.some((i) => typeof i === 'string' && i.startsWith(BOX_DEVICE_SIGNATURE.identifierPrefix));
}

/** The retained discovery messages announcing the box (topic -> JSON payload text). */
export function boxDiscovery(opts: { prefix: string; node: string; name: string; version: string; topics: BoxTopics }): Array<{ topic: string; payload: string }> {
  const { prefix, node, name, topics } = opts;
  const device = { identifiers: [`${BOX_DEVICE_SIGNATURE.identifierPrefix}${node}`], name, manufacturer: BOX_DEVICE_SIGNATURE.manufacturer, model: BOX_DEVICE_SIGNATURE.model, sw_version: opts.version };
  const common = { availability_topic: topics.availability, payload_available: 'online', payload_not_available: 'offline', device };
  const entries: Array<[string, Record<string, unknown>]> = [
    ['button', { name: 'Stop', unique_id: `${node}_stop`, object_id: `${node}_stop`, command_topic: topics.stopCommand, payload_press: 'PRESS', icon: 'mdi:stop-circle' }],
    ['sensor', {
      name: 'Assistant state', unique_id: `${node}_assistant_state`, object_id: `${node}_assistant_state`, state_topic: topics.state,
      device_class: 'enum', options: [...ASSISTANT_STATES], icon: 'mdi:account-voice',
    }],
    ['sensor', { name: 'Last transcript', unique_id: `${node}_last_transcript`, object_id: `${node}_last_transcript`, state_topic: topics.transcript, icon: 'mdi:text' }],
    ['number', {
      name: 'Volume', unique_id: `${node}_volume`, object_id: `${node}_volume`, command_topic: topics.volumeCommand, state_topic: topics.volumeState,
      min: 0, max: 100, step: 1, unit_of_measurement: '%', mode: 'slider', icon: 'mdi:volume-high',
    }],
  ];
  return entries.map(([component, cfg]) => {
    const object = String(cfg.unique_id).slice(node.length + 1);
    return { topic: `${prefix}/${component}/${node}/${object}/config`, payload: JSON.stringify({ ...common, ...cfg }) };
  });
}

/** HA sensor states are at most 255 characters. */
export function clipState(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= 255 ? t : `${t.slice(0, 254)}…`;
}
