/**
 * The timers plugin (seed 000 timer: timer_set + interrupt feedback). One
 * tool for the LLM, `timer` (action set, cancel, pause, resume, add_time,
 * remove_time, status; one tool because every turn offers it, issue 19); the same service is
 * what the local intents call. On expiry it raises an L3 interrupt
 * (seed 001: "L3 Interactive — timer expiry") on the timer's channel (or
 * plugin.timers.channel when that one lasts only for a request) whose
 * input carries meta {timer_expired: true, timer_id, spoken}; this plugin's
 * on_input handler answers such an input itself by setting ctx.response to
 * the spoken text, so the expiry is announced without the LLM and still
 * recorded in the context window.
 */
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { SettingDef } from '../../kernel/settings-types.js';
import type { StageContext } from '../../kernel/stage-types.js';
import { defineTool } from '../../kernel/tool-schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { TimerError, TimerService, expiryText, formatDuration, type Timer, type TimerStatus } from './timer-service.js';
import { FALLBACK_CHANNEL_META } from '../../kernel/turn-output.js';

/** What the timer tool does (seed 000 timer_set, plus cancel, pause/resume, changing the length, the status). */
const TIMER_ACTIONS = ['set', 'cancel', 'pause', 'resume', 'add_time', 'remove_time', 'status'] as const;

/** Constructor options of TimersPlugin. */
/** The timers plugin's settings. */
export const TIMER_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.timers.channel', type: 'string', default: 'speaker', description: 'Output channel that announces an expired timer when the timer was set without one, or over a channel that reaches only a waiting caller (homeagent ask).' },
];

export interface TimersPluginOptions {
  /** Clock (tests pass a FakeClock). Default: the system clock. */
  clock?: Clock;
  /** SQLite path; default `<dataDir>/timers.db`. */
  dbPath?: string;
}

/** Interrupt level of an expiry (seed 001: L3 Interactive). */
export const TIMER_EXPIRY_LEVEL = 3;

/** See module comment. */
export class TimersPlugin implements Plugin {
  readonly name = 'timers';
  private svc: TimerService | undefined;
  private sdk: PluginSDK | undefined;

  constructor(private readonly opts: TimersPluginOptions = {}) {}

  /** The running service (local intents call it); undefined before start(). */
  get service(): TimerService | undefined {
    return this.svc;
  }

  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    const settings = sdk.settings();
    for (const d of TIMER_SETTINGS) settings.register(d);
    const svc = new TimerService({
      dbPath: this.opts.dbPath ?? path.join(sdk.dataDir, 'timers.db'),
      clock: this.opts.clock ?? systemClock,
      log: sdk.log,
      onExpire: (t) => this.announce(t),
      onChange: (change, t) => sdk.publish('plugin.timers.changed', { change, id: t.id, ...(t.name ? { name: t.name } : {}), seconds: t.duration_s, ends_at: t.ends_at }),
    });
    this.svc = svc;
    svc.start();

    sdk.registerStage('on_input', (ctx: StageContext) => {
      const meta = ctx.input.meta;
      if (meta?.timer_expired === true) ctx.response = typeof meta.spoken === 'string' ? meta.spoken : ctx.input.text;
    });

    const channelOf = (input: { channel: string }): string => {
      const c = input.channel;
      return c && !c.startsWith('_') ? c : settings.get<string>('plugin.timers.channel');
    };
    // Argument types come from the schema (defineTool); the registry's ajv checks them before the handler runs.
    // One tool, not four: every ordinary turn offers it, and each tool's frame costs the prompt tokens (issue 19).
    sdk.registerTool(defineTool({
      name: 'timer',
      description: 'Countdown timers, by name or id (cancel: or all); set, add_time and remove_time take seconds. Several timers and no name: ask which. Example: {"action":"set","seconds":300,"name":"pasta"}',
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: TIMER_ACTIONS },
          seconds: { type: 'number', minimum: 1, maximum: 604800 },
          name: { type: 'string' },
          id: { type: 'string' },
          all: { type: 'boolean' },
        },
        required: ['action'],
        additionalProperties: false,
      },
      handler: (args, ctx) => {
        const sel = { ...(args.id ? { id: args.id } : {}), ...(args.name ? { name: args.name } : {}) };
        switch (args.action) {
          case 'set': {
            if (args.seconds === undefined) throw new TimerError('set needs seconds');
            const t = svc.set({ seconds: args.seconds, name: args.name, channel: channelOf(ctx.input) });
            return { id: t.id, name: t.name, seconds: t.duration_s, ends_at: new Date(t.ends_at).toISOString(), spoken: formatDuration(t.duration_s, 'en') };
          }
          case 'cancel': {
            const cancelled = svc.cancel({ id: args.id, name: args.name, all: args.all === true });
            return { cancelled: cancelled.map((t) => ({ id: t.id, name: t.name, seconds: t.duration_s })) };
          }
          case 'status':
            return { timers: svc.status().map((t) => ({ id: t.id, name: t.name, seconds: t.duration_s, state: t.state, remaining_s: t.remaining_s })) };
          default: {
            let t: TimerStatus | undefined;
            if (args.action === 'pause') t = svc.pause(sel);
            else if (args.action === 'resume') t = svc.resume(sel);
            else {
              if (args.seconds === undefined) throw new TimerError(`${args.action} needs seconds`);
              t = svc.adjust(sel, args.action === 'add_time' ? args.seconds : -args.seconds);
            }
            if (!t) return { changed: false, reason: `no ${args.action === 'resume' ? 'paused' : args.action === 'pause' ? 'running' : 'active'} timer fits` };
            return { changed: true, id: t.id, name: t.name, state: t.state, remaining_s: t.remaining_s };
          }
        }
      },
    }));
  }

  private announce(t: Timer): void {
    const sdk = this.sdk;
    if (!sdk) return;
    const spoken = expiryText(t);
    // It rings where it was set, unless that channel reaches only a caller while it waits (`homeagent ask`): it
    // would hand the ring to whoever waits there now, or to nobody. The box's own channel then. (A channel not
    // registered yet is kept: at start a timer that fell due while off fires before the later plugins are up.)
    // A channel that is still not there when the ring is said (the console of a box started with --no-console)
    // gives way to the box's own (FALLBACK_CHANNEL_META).
    // plugin.timers.channel itself may name no channel (a tester's "nosuch": the ring was lost): then the speaker, then
    // the console. Chosen when the ring is said, not now: at start the later plugins' channels are not there yet.
    const boxChannel = sdk.settings().get<string>('plugin.timers.channel');
    const channel = sdk.outputChannel(t.channel)?.perRequest ? boxChannel : t.channel;
    const fallbacks = [...new Set([boxChannel, 'speaker', 'console'])];
    sdk
      .injectInterrupt(TIMER_EXPIRY_LEVEL, channel, spoken, { announcement: true, meta: { timer_expired: true, timer_id: t.id, spoken, [FALLBACK_CHANNEL_META]: fallbacks } })
      .catch((err: unknown) => sdk.log.error({ err, id: t.id }, 'cannot announce expired timer'));
  }

  stop(): void {
    this.svc?.stop();
    this.svc = undefined;
    this.sdk = undefined;
  }
}
