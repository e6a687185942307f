/**
 * The LLM's tools for the home: device_list (by room/type), device_state and
 * device_control (the component's own actions, published with its payload
 * conventions by commands.ts). Risky controls need the user's yes: the
 * plugin's before_toolcall handler asks first and records the approval per
 * call id; a device_control call that arrives without one (a path that
 * skipped before_toolcall) asks itself.
 */
import type { ToolDef } from '../kernel/stage-types.js';
import { ACTIONS, normaliseAction, type ActionName, type DeviceAction } from './commands.js';
import type { ConfirmationGate } from './confirm.js';
import type { HomeController } from './controller.js';
import type { Entity, EntityState } from './entities.js';
import { HomeError } from './errors.js';
import type { DeviceRegistry } from './registry.js';
import { COLOUR_RGB, the, toLang, verb } from './replies.js';

/** Dependencies of the tools. */
export interface HomeToolDeps {
  registry: DeviceRegistry;
  controller: HomeController;
  gate: ConfirmationGate;
  /** Call ids whose risky action the before_toolcall stage already confirmed. */
  approvals: Set<string>;
}

/** Find one entity by id, name or alias (case-insensitive). Throws DEVICE_NOT_FOUND / BAD_ARGUMENT (ambiguous). */
export function findEntity(registry: DeviceRegistry, ref: string): Entity {
  const byId = registry.get(ref);
  if (byId) return byId;
  const n = ref.trim().toLowerCase();
  const hits = registry.entities().filter((e) => e.name.toLowerCase() === n || e.aliases.some((a) => a.toLowerCase() === n));
  if (hits.length === 1) return hits[0] as Entity;
  if (hits.length > 1) throw new HomeError('BAD_ARGUMENT', `"${ref}" is ambiguous: ${hits.map((e) => `${e.id} (${e.component}${e.area ? `, ${e.area}` : ''})`).join('; ')}`);
  throw new HomeError('DEVICE_NOT_FOUND', `no device called "${ref}"; call device_list to see the devices`);
}

function parseColour(v: unknown): DeviceAction['color'] {
  if (v === undefined) return undefined;
  if (typeof v === 'string') {
    const hex = /^#?([0-9a-f]{6})$/i.exec(v.trim());
    if (hex) {
      const n = Number.parseInt(hex[1] as string, 16);
      return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
    }
    const c = COLOUR_RGB[v.trim().toLowerCase()];
    if (c) return c;
  }
  throw new HomeError('BAD_ARGUMENT', 'color must be a colour name (red, blue, ...) or #rrggbb');
}

/** Turn device_control arguments into a DeviceAction. Throws BAD_ARGUMENT. */
export function actionFromArgs(args: Record<string, unknown>): DeviceAction {
  const action = args.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    throw new HomeError('BAD_ARGUMENT', `action must be one of ${ACTIONS.join(', ')}`);
  }
  const n = (k: string): number | undefined => (typeof args[k] === 'number' ? (args[k] as number) : undefined);
  const a: DeviceAction = { action: action as ActionName };
  if (n('brightness') !== undefined) a.brightness_pct = n('brightness');
  if (args.color !== undefined) a.color = parseColour(args.color);
  if (n('color_temp') !== undefined) a.color_temp = n('color_temp');
  if (n('position') !== undefined) a.position = n('position');
  if (n('temperature') !== undefined) a.temperature = n('temperature');
  if (n('percentage') !== undefined) a.percentage = n('percentage');
  if (typeof args.mode === 'string') a.mode = args.mode;
  return a;
}

function stateFields(s: EntityState): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s };
  if (s.brightness !== undefined) out.brightness_pct = Math.round((s.brightness / 255) * 100);
  delete out.brightness;
  if (s.updated_at !== undefined) out.updated_at = new Date(s.updated_at).toISOString();
  return out;
}

/** The question asked before a risky control. */
export function confirmationQuestion(entity: Entity, action: DeviceAction, lang: 'en' | 'zh'): string {
  const act = normaliseAction(entity, action.action);
  return lang === 'zh'
    ? `确定要${verb(act, lang)}${entity.name}吗？请说是或不。`
    : `Do you really want to ${verb(act, lang)} ${the(entity, lang)}? Please say yes or no.`;
}

/** The three tools. */
export function homeTools(d: HomeToolDeps): ToolDef[] {
  return [
    {
      name: 'device_list',
      description: 'List the smart-home devices the box knows (from MQTT), optionally only one room or one type, with availability and state.',
      parameters: {
        type: 'object',
        properties: {
          room: { type: 'string', description: 'Room name, e.g. "Office".' },
          type: { type: 'string', enum: ['light', 'switch', 'cover', 'lock', 'climate', 'fan', 'scene', 'button', 'sensor', 'binary_sensor'] },
        },
        additionalProperties: false,
      },
      handler: (args) => {
        const room = typeof args.room === 'string' ? args.room.trim().toLowerCase() : undefined;
        const type = typeof args.type === 'string' ? args.type : undefined;
        const devices = d.registry
          .views()
          .filter((v) => (!room || v.entity.area?.toLowerCase() === room) && (!type || v.entity.component === type))
          .map((v) => ({ id: v.entity.id, name: v.entity.name, type: v.entity.component, room: v.entity.area ?? null, available: v.available, state: v.state.state ?? null }));
        return { devices, rooms: d.registry.vocabulary().areas };
      },
    },
    {
      name: 'device_state',
      description: 'The current state of one device (by id or name): on/off, brightness %, colour, position, temperatures, sensor value, availability.',
      parameters: { type: 'object', properties: { device: { type: 'string', description: 'Device id or name.' } }, required: ['device'], additionalProperties: false },
      handler: (args) => {
        const e = findEntity(d.registry, String(args.device));
        const v = d.registry.view(e.id);
        return { id: e.id, name: e.name, type: e.component, room: e.area ?? null, available: v?.available ?? false, state: stateFields(v?.state ?? {}) };
      },
    },
    {
      name: 'device_control',
      description:
        'Control one device (by id or name). Actions by type: light/switch/fan turn_on, turn_off, toggle (light: brightness 0-100 %, color name or #rrggbb, color_temp mireds; fan: set_percentage); cover open, close, stop, set_position (position 0-100 % open); lock lock, unlock; climate set_temperature (temperature), set_mode (mode), turn_off; scene activate; button press. Unlocking, opening a garage and devices marked risky ask the user first.',
      parameters: {
        type: 'object',
        properties: {
          device: { type: 'string' },
          action: { type: 'string', enum: [...ACTIONS] },
          brightness: { type: 'number', minimum: 0, maximum: 100 },
          color: { type: 'string' },
          color_temp: { type: 'number' },
          position: { type: 'number', minimum: 0, maximum: 100 },
          temperature: { type: 'number' },
          mode: { type: 'string' },
          percentage: { type: 'number', minimum: 0, maximum: 100 },
        },
        required: ['device', 'action'],
        additionalProperties: false,
      },
      // Room for the user's answer to a confirmation question plus the broker's acknowledgement.
      timeout_ms: 180_000,
      handler: async (args, ctx) => {
        const e = findEntity(d.registry, String(args.device));
        const action = actionFromArgs(args);
        d.controller.plan(e.id, action);
        if (d.controller.isRisky(e, action) && !d.approvals.delete(ctx.call_id)) {
          const lang = toLang(/[\u4e00-\u9fff]/.test(ctx.input.text) ? 'zh' : 'en');
          const ok = await d.gate.request({
            who: `${ctx.input.user ?? ctx.input.source} via device_control`,
            what: `${action.action} ${e.name}`,
            channel: ctx.input.channel,
            question: confirmationQuestion(e, action, lang),
            lang,
          });
          if (!ok) throw new HomeError('NOT_CONFIRMED', `the user did not confirm: ${action.action} ${e.name}`);
        }
        const r = await d.controller.control(e.id, action, `${ctx.input.user ?? ctx.input.source} via device_control`);
        return { ok: true, device: e.id, name: e.name, action: action.action, published: r.published.map((c) => ({ topic: c.topic, payload: c.payload })) };
      },
    },
  ];
}
