/**
 * The LLM's tools for the home: device_state (one device, or the devices of
 * a room or type) and device_control (the component's own actions, published with its payload
 * conventions by commands.ts). Risky controls need the user's yes: the
 * plugin's before_toolcall handler asks first and records the approval per
 * call id; a device_control call that arrives without one (a path that
 * skipped before_toolcall) asks itself.
 */
import type { ToolDef } from '../kernel/stage-types.js';
import { detectLanguage } from '../kernel/language.js';
import { defineTool, schemaGuard, type FromSchema } from '../kernel/tool-schema.js';
import { ACTIONS, normaliseAction, type DeviceAction } from './commands.js';
import type { ConfirmationGate } from './confirm.js';
import type { HomeController } from './controller.js';
import { COMPONENTS, type Entity, type EntityState } from './entities.js';
import { HomeError } from './errors.js';
import type { DeviceRegistry } from './registry.js';
import { actionPhrase, COLOUR_RGB, the, toLang, verb } from './replies.js';
import type { ReportWatch } from './report-watch.js';
import { resolveTarget } from './resolve.js';

/** Dependencies of the tools. */
export interface HomeToolDeps {
  registry: DeviceRegistry;
  controller: HomeController;
  gate: ConfirmationGate;
  /** Call ids whose risky action the before_toolcall stage already confirmed. */
  approvals: Set<string>;
  /** Watches that the devices commanded report back (report-watch.ts); absent: not watched. */
  reportWatch?: ReportWatch;
}

/**
 * The one device `ref` names, by the home's one resolver (resolve.ts): the
 * registry id, an exact name or alias, a partial name that fits exactly one
 * device, or a room that has exactly one device. Throws HomeError
 * DEVICE_NOT_FOUND when nothing fits, BAD_ARGUMENT naming the candidates when
 * the name fits several devices or the room has several (a tool controls one
 * device; it is never widened to all of them).
 */
export function findEntity(registry: DeviceRegistry, ref: string): Entity {
  const r = resolveTarget(registry.entities(), { name: ref });
  const list = (es: Entity[]): string => es.map((e) => `${e.id} (${e.name}, ${e.component}${e.area ? `, ${e.area}` : ''})`).join('; ');
  switch (r.kind) {
    case 'one':
      return r.entity;
    case 'set':
      if (r.entities.length === 1) return r.entities[0] as Entity;
      throw new HomeError('BAD_ARGUMENT', `"${ref}" is a room with several devices: ${list(r.entities)}; name one of them`);
    case 'ambiguous':
      throw new HomeError('BAD_ARGUMENT', `"${ref}" is ambiguous, it fits several devices: ${list(r.candidates)}; name one of them`);
    case 'not_found':
      throw new HomeError('DEVICE_NOT_FOUND', `no device called "${ref}"; call device_state without a device to see the devices`);
  }
}

function parseColour(v: string): NonNullable<DeviceAction['color']> {
  const hex = /^#?([0-9a-f]{6})$/i.exec(v.trim());
  if (hex) {
    const n = Number.parseInt(hex[1] as string, 16);
    return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
  }
  // Own entries only: "constructor" is no colour.
  const c = Object.hasOwn(COLOUR_RGB, v.trim().toLowerCase()) ? COLOUR_RGB[v.trim().toLowerCase()] : undefined;
  if (c) return c;
  throw new HomeError('BAD_ARGUMENT', 'color must be a colour name (red, blue, ...) or #rrggbb');
}

/**
 * The device_state arguments' schema (the one definition: ajv validates it, `DeviceStateArgs` is derived from it): one
 * device by name, or without one the devices, optionally of one room or type (one tool for both, issue 19: every turn
 * offers it).
 */
export const DEVICE_STATE_SCHEMA = {
  type: 'object',
  properties: {
    device: { type: 'string' },
    room: { type: 'string' },
    type: { type: 'string', enum: COMPONENTS },
  },
  additionalProperties: false,
} as const;

/** The device_control arguments' schema: brightness, position and percentage in %, color_temp in mireds, temperature in the thermostat's unit. */
export const DEVICE_CONTROL_SCHEMA = {
  type: 'object',
  properties: {
    device: { type: 'string' },
    action: { type: 'string', enum: ACTIONS },
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
} as const;

/** device_state arguments (from DEVICE_STATE_SCHEMA). */
export type DeviceStateArgs = FromSchema<typeof DEVICE_STATE_SCHEMA>;
/** device_control arguments (from DEVICE_CONTROL_SCHEMA). */
export type DeviceControlArgs = FromSchema<typeof DEVICE_CONTROL_SCHEMA>;

/**
 * True when `args` are valid device_control arguments (the same ajv check the
 * tool registry makes), for the before_toolcall stage, which runs before it.
 */
export const isDeviceControlArgs = schemaGuard(DEVICE_CONTROL_SCHEMA);

/**
 * Turn validated device_control arguments into a DeviceAction. Throws
 * BAD_ARGUMENT for a colour that is neither a known name nor #rrggbb (the
 * one thing the schema cannot say).
 */
export function actionFromArgs(args: DeviceControlArgs): DeviceAction {
  const a: DeviceAction = { action: args.action };
  if (args.brightness !== undefined) a.brightness_pct = args.brightness;
  if (args.color !== undefined) a.color = parseColour(args.color);
  if (args.color_temp !== undefined) a.color_temp = args.color_temp;
  if (args.position !== undefined) a.position = args.position;
  if (args.temperature !== undefined) a.temperature = args.temperature;
  if (args.percentage !== undefined) a.percentage = args.percentage;
  if (args.mode !== undefined) a.mode = args.mode;
  return a;
}

function stateFields(s: EntityState): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s };
  if (s.brightness !== undefined) out.brightness_pct = Math.round((s.brightness / 255) * 100);
  delete out.brightness;
  // When the last message came (a sensor reports every few seconds): not the state's meaning, and tokens in every later prompt (issue 19).
  delete out.updated_at;
  return out;
}

/** The question asked before a risky control. */
export function confirmationQuestion(entity: Entity, action: DeviceAction, lang: 'en' | 'zh'): string {
  const act = normaliseAction(entity, action.action);
  return lang === 'zh'
    ? `确定要${verb(act, lang)}${entity.name}吗？请说是或不。`
    : `Do you really want to ${verb(act, lang)} ${the(entity, lang)}? Please say yes or no.`;
}

/** The two tools. */
export function homeTools(d: HomeToolDeps): ToolDef[] {
  return [
    defineTool({
      name: 'device_state',
      description: 'The state of one device; without a device, the devices (of a room or type if given). Example: {"device":"Front Door"}',
      parameters: DEVICE_STATE_SCHEMA,
      handler: (args) => {
        if (args.device !== undefined) {
          const e = findEntity(d.registry, args.device);
          const v = d.registry.view(e.id);
          return { name: e.name, type: e.component, room: e.area ?? null, available: v?.available ?? false, state: stateFields(v?.state ?? {}) };
        }
        const room = args.room?.trim().toLowerCase();
        const devices = d.registry
          .views()
          .filter((v) => (!room || v.entity.area?.toLowerCase() === room) && (!args.type || v.entity.component === args.type))
          .map((v) => ({ name: v.entity.name, type: v.entity.component, room: v.entity.area ?? null, state: v.available ? (v.state.state ?? null) : 'unavailable' }));
        return { devices, rooms: d.registry.vocabulary().areas };
      },
    }),
    defineTool({
      name: 'device_control',
      description:
        'Control one device; brightness, position (open) and percentage in %. Risky actions ask first. Example: {"device":"Kitchen Lights","action":"turn_on","brightness":80}',
      parameters: DEVICE_CONTROL_SCHEMA,
      // Room for the user's answer to a confirmation question plus the broker's acknowledgement.
      timeout_ms: 180_000,
      handler: async (args, ctx) => {
        const e = findEntity(d.registry, args.device);
        const action = actionFromArgs(args);
        d.controller.plan(e.id, action);
        if (d.controller.isRisky(e, action) && !d.approvals.delete(ctx.call_id)) {
          const lang = detectLanguage(ctx.input.text);
          const ok = await d.gate.request({
            who: `${ctx.input.user ?? ctx.input.source} via device_control`,
            what: `${action.action} ${e.name}`,
            spoken: actionPhrase(e, normaliseAction(e, action.action), action, toLang(lang)),
            channel: ctx.input.channel,
            question: confirmationQuestion(e, action, lang),
            lang,
          });
          if (!ok) throw new HomeError('NOT_CONFIRMED', `the user did not confirm: ${action.action} ${e.name}`);
        }
        const reportsBefore = d.reportWatch?.before([e]);
        await d.controller.control(e.id, action, `${ctx.input.user ?? ctx.input.source} via device_control`);
        const replyLang = toLang(detectLanguage(ctx.input.text));
        d.reportWatch?.expect([e], { phrase: (x) => actionPhrase(x, normaliseAction(x, action.action), action, replyLang), lang: replyLang }, ctx.input.channel, reportsBefore);
        // What the model reads: done, and what. The MQTT topic and payload stay out of the prompt (issue 19: every turn re-reads the
        // history); the bus event plugin.home.command carries them to the run log, `homeagent logs` and `listen`.
        return { ok: true, name: e.name, action: action.action };
      },
    }),
  ];
}
