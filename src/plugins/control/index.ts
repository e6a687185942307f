/**
 * The maintenance socket (server side of `homeagent <command>`): a Unix
 * socket, mode 0660, in the runtime directory on the device or the data
 * directory in development. Commands are handlers registered by name; the
 * plugin itself provides those it can serve through the SDK (ask, say, stop,
 * logs, config); other plugins serve theirs through the plugin API
 * (PluginSDK.registerCommand: the voice plugin's `listen`) while they run;
 * the service adds the rest (status, devices, memory, doctor, update). A bad
 * request gets an error line; nothing a client sends can crash the service.
 */
import { isStopWord } from '../../kernel/stop-words.js';
import net from 'node:net';
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { EventType } from '../../kernel/events.js';
import { TURN_EVENT_TYPES } from '../../kernel/turn-events.js';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { Cap } from '../../kernel/output-types.js';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';
import { charCount, visibleText } from '../../kernel/visible-text.js';
import type { CommandHandler, CommandIO, CommandRegistry } from '../../kernel/commands.js';
import { LineSplitter, type ControlRequest, type ControlResponse } from '../../cli/protocol.js';
import { envNameFor } from '../../config/registry.js';
import { onLogProblem } from '../../kernel/log.js';
import { normalisePersonName, validatePersonName } from '../../kernel/people.js';
import { watchActions } from './actions.js';
import { parseJson } from '../../kernel/json.js';

/** Options of the control plugin. */
export interface ControlOptions {
  socketPath: string;
  /** Extra commands from the service. */
  commands?: Record<string, CommandHandler>;
  /** Commands plugins registered through the plugin API (PluginSDK.registerCommand, e.g. the voice plugin's `listen`); they win over `commands`. */
  registry?: CommandRegistry;
}

/**
 * What `homeagent logs` follows: inputs, the turn events (src/kernel/turn-events.ts) but the bulky or per-token
 * ones (context.projected, llm.requested, llm.delta), the kernel's own events, the MQTT commands the home
 * plugin sent (plugin.home.command) and how its risky actions' questions were settled (plugin.home.decision), the timers started, changed or cancelled (plugin.timers.changed) and the list items added,
 * removed or completed (plugin.lists.changed); the `logs` command adds every warning and error logged (event `log`).
 */
const LOG_EVENTS: EventType[] = [
  'raw_input',
  ...TURN_EVENT_TYPES.filter((t) => t !== 'context.projected' && t !== 'llm.requested' && t !== 'llm.delta'),
  'system',
  'assistant_state',
  'stop',
  'plugin.home.command',
  'plugin.home.decision',
  'plugin.home.unreported',
  'plugin.timers.changed',
  'plugin.lists.changed',
  'plugin.voice.not_understood',
];

/** Whether a homeagent service answers on `socketPath`. */
export function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    if (!existsSync(socketPath)) return resolve(false);
    const c = net.connect(socketPath);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** The plugin. Kernel-level: `homeagent stop` is a user stop. */
export class ControlPlugin implements Plugin {
  readonly name = 'control';
  readonly kernelLevel = true;
  private server?: net.Server;
  /** True once this plugin created the socket file (only then may it remove it). */
  private ownsSocket = false;
  private readonly sockets = new Set<net.Socket>();
  private commands = new Map<string, CommandHandler>();
  private sdk?: PluginSDK;

  constructor(private readonly opts: ControlOptions) {}

  /** Add or replace a command (the service registers its own after plugins start). */
  addCommand(name: string, handler: CommandHandler): void {
    this.commands.set(name, handler);
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    this.builtins(sdk);
    for (const [n, h] of Object.entries(this.opts.commands ?? {})) this.commands.set(n, h);
    const p = this.opts.socketPath;
    mkdirSync(path.dirname(p), { recursive: true });
    if (existsSync(p)) {
      // A stale socket from a crashed run: refuse only if something still answers on it.
      const alive = await new Promise<boolean>((resolve) => {
        const c = net.connect(p);
        c.once('connect', () => {
          c.destroy();
          resolve(true);
        });
        c.once('error', () => resolve(false));
      });
      if (alive) throw new HomeAgentError('SOCKET_IN_USE', `another homeagent is already running with this data directory (its socket ${p} answers); stop it first (systemctl stop homeagent) or use another --data-dir`);
      unlinkSync(p);
    }
    this.server = net.createServer((s) => this.onConnection(s));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(p, () => resolve());
    });
    this.ownsSocket = true;
    try {
      chmodSync(p, 0o660);
    } catch (err) {
      sdk.log.warn({ err: errorMessage(err) }, 'could not chmod the control socket');
    }
    sdk.log.info({ socket: p }, 'maintenance socket listening');
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server = undefined;
    if (!this.ownsSocket) return;
    this.ownsSocket = false;
    try {
      unlinkSync(this.opts.socketPath);
    } catch {
      /* gone */
    }
  }

  /** Callers of `ask` waiting for their reply, by the id of the input they asked. */
  private readonly askers = new Map<string, CommandIO>();

  private builtins(sdk: PluginSDK): void {
    // The `cli` channel: replies to `homeagent ask`, streamed to the waiting clients as they come.
    sdk.registerOutputChannel('cli', Cap.Text | Cap.Stream, 'the maintenance command line (homeagent ask)', (m) => {
      // A reply goes to the caller whose input it answers; anything else sent to this channel
      // (output_send__cli from another input's turn, a plugin's message) to every waiting caller.
      const own = m.input_id !== undefined ? this.askers.get(m.input_id) : undefined;
      // `aside`: said while this caller waited but not its reply ("OK, I did not unlock the Front Door." when a
      // yes/no question is dropped because the person asked something else); a newcomer read it as the reply.
      if (own) own.send({ kind: m.kind, content: m.content });
      else for (const io of this.askers.values()) io.send({ kind: m.kind, content: m.content, aside: true });
    }, { perRequest: true });
    this.commands.set('ask', async (args, io) => {
      const text = requireText(args, sdk.settings().get<number>('core.agent.max_input_chars'));
      // "stop" alone is the stop button, as typed in the console: not a message for the agent.
      if (isStopWord(text)) {
        sdk.stop('cli');
        return { input_id: '', reply: '', status: 'stopped', tools: [], actions: [] };
      }
      // `homeagent ask --as NAME`: who is asking (a person, never the channel); without it, nobody in particular.
      let user: string | undefined;
      if (args.as !== undefined) {
        try {
          user = normalisePersonName(validatePersonName(args.as, '"as" (the person asking)'));
        } catch (err) {
          throw new HomeAgentError('BAD_ARGUMENT', errorMessage(err));
        }
      }
      let id: string | undefined;
      // What this input's turn did (device commands, timers, list items), listed with the reply as `listen` lists
      // them: a command handled locally calls no tool, so the tools alone showed nothing done.
      let running = false;
      const offTurn = [
        sdk.subscribe('turn.started', (e) => void (e.turn === id && (running = true))),
        sdk.subscribe('turn.finished', (e) => void (e.turn === id && (running = false))),
      ];
      const seen = watchActions(sdk, () => running);
      try {
        const result = await sdk.injectInput(typeof args.channel === 'string' ? args.channel : 'cli', text, {
          ...(user ? { user } : {}),
          // A caller that hangs up before its turn begins takes its input with it (nothing acts late for nobody).
          signal: io.signal,
          onAccepted: (inputId) => {
            id = inputId;
            this.askers.set(inputId, io);
          },
        });
        return { ...result, actions: [...seen.actions] };
      } finally {
        seen.off();
        for (const off of offTurn) off();
        if (id !== undefined) this.askers.delete(id);
      }
    });
    this.commands.set('say', async (args) => {
      const text = requireText(args, sdk.settings().get<number>('core.agent.max_input_chars'));
      // Nothing a voice can say (an emoji, punctuation): refused here, by name, instead of a speaker failure with three
      // possible causes in `status` (a newcomer's `say "🙂"`).
      if (!/[\p{L}\p{N}]/u.test(text)) throw new HomeAgentError('BAD_ARGUMENT', `"text" has no letter or digit to say aloud (${JSON.stringify(text.slice(0, 40))}): nothing was spoken`);
      const channel = typeof args.channel === 'string' ? args.channel : 'speaker';
      // Waits until the text was handed to the speaker: a broken TTS engine is an error here, not "said".
      await sdk.sendOutput(channel, text, { await_spoken: true });
      return { said: text, channel };
    });
    this.commands.set('stop', () => {
      sdk.stop('cli');
      return { stopped: true };
    });
    // Secrets are never echoed; a value overridden by the environment says so.
    const describe = (key: string) => {
      const s = sdk.settings();
      const row = s.list(key).find((r) => r.key === key);
      const value = row?.type === 'secret' ? (s.get<string>(key) ? '********' : '') : s.get(key);
      return { key, value, ...(row?.source === 'env' ? { source: 'env', note: `overridden by the environment variable ${envNameFor(key)}; the stored value applies only without it` } : {}) };
    };
    this.commands.set('config.get', (args) => describe(requireString(args, 'key')));
    this.commands.set('config.set', (args) => {
      const key = requireString(args, 'key');
      const s = sdk.settings();
      if (typeof args.raw === 'string' && s.setFromString) s.setFromString(key, args.raw);
      else s.set(key, args.value);
      // Taken, with a warning when the key's owner has one (SettingDef.advise: a protected device that fits none).
      const d = describe(key);
      const advice = s.advice?.(key);
      return advice ? { ...d, note: [d.note, advice].filter(Boolean).join('; ') } : d;
    });
    this.commands.set('config.list', (args) => sdk.settings().list(typeof args.prefix === 'string' ? args.prefix : ''));
    // What applies after the delete: the default, or the environment's value.
    this.commands.set('config.delete', (args) => {
      const key = requireString(args, 'key');
      const removed = sdk.settings().delete(key);
      const { value, note } = describe(key);
      const source = sdk.settings().list(key).find((r) => r.key === key)?.source;
      return { deleted: key, removed, value, ...(source ? { source } : {}), ...(note ? { note } : {}) };
    });
    this.commands.set('logs', (_args, io) => {
      const offs = LOG_EVENTS.map((t) => sdk.subscribe(t, (payload) => io.send({ event: t, at: new Date().toISOString(), payload })));
      offs.push(onLogProblem((p) => io.send({ event: 'log', at: p.time, payload: p })));
      return new Promise((resolve) => {
        io.signal.addEventListener('abort', () => {
          for (const off of offs) off();
          resolve({ closed: true });
        });
      });
    });
  }

  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    const splitter = new LineSplitter();
    const controller = new AbortController();
    const write = (r: ControlResponse) => {
      if (!socket.destroyed) socket.write(JSON.stringify(r) + '\n');
    };
    socket.on('data', (chunk: Buffer) => {
      let lines: string[];
      try {
        lines = splitter.push(chunk);
      } catch (err) {
        write({ id: 0, type: 'error', error: `${errorMessage(err)}: refused (the connection is closed)`, code: 'REQUEST_TOO_LARGE' });
        socket.destroy();
        return;
      }
      for (const line of lines) void this.handle(line, write, controller.signal);
    });
    socket.on('close', () => {
      controller.abort();
      this.sockets.delete(socket);
    });
    socket.on('error', () => undefined);
  }

  private async handle(line: string, write: (r: ControlResponse) => void, signal: AbortSignal): Promise<void> {
    let req: ControlRequest;
    try {
      const parsed: unknown = parseJson(line);
      if (!parsed || typeof parsed !== 'object' || typeof (parsed as ControlRequest).cmd !== 'string') throw new Error('request must be {"id":N,"cmd":"...","args":{}}');
      req = parsed as ControlRequest;
      if (typeof req.id !== 'number') req.id = 0;
      if (!req.args || typeof req.args !== 'object') req.args = {};
    } catch (err) {
      write({ id: 0, type: 'error', error: `bad request: ${errorMessage(err)}`, code: 'BAD_REQUEST' });
      return;
    }
    const handler = this.opts.registry?.get(req.cmd) ?? this.commands.get(req.cmd);
    if (!handler) {
      const names = new Set([...this.commands.keys(), ...(this.opts.registry?.names() ?? [])]);
      write({ id: req.id, type: 'error', error: `unknown command "${req.cmd}"; commands: ${[...names].sort().join(', ')}`, code: 'UNKNOWN_COMMAND' });
      return;
    }
    try {
      const result = await handler(req.args, { send: (data) => write({ id: req.id, type: 'data', data }), signal });
      write({ id: req.id, type: 'end', result: result ?? null });
    } catch (err) {
      const code = err instanceof HomeAgentError ? err.code : 'COMMAND_FAILED';
      write({ id: req.id, type: 'error', error: errorMessage(err), code });
    }
  }
}

/**
 * `args.text` with its invisible characters removed (visibleText): a non-empty string of at most `max`
 * characters (core.agent.max_input_chars, counted as code points: charCount). Longer is refused with
 * BAD_ARGUMENT naming both lengths: the agent would cut it, and a typed message cut without a word lost its
 * end silently (a tester's 100 KB ask); `say` had no limit at all. Nothing visible (a tester's NUL and
 * zero-width spaces went to the LLM) is BAD_ARGUMENT too.
 */
function requireText(args: Record<string, unknown>, max: number): string {
  const text = visibleText(requireString(args, 'text'));
  if (!text) throw new HomeAgentError('BAD_ARGUMENT', '"text" has nothing visible in it (only control or zero-width characters); nothing was asked or said');
  const n = charCount(text);
  if (n > max) throw new HomeAgentError('BAD_ARGUMENT', `"text" is ${n} characters, over the ${max} taken (core.agent.max_input_chars); nothing was asked or said`);
  return text;
}

/** args[key] as a string with something in it besides white space; BAD_ARGUMENT naming the key otherwise (a newcomer's `ask "   "` went to the LLM). */
function requireString(args: Record<string, unknown>, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || !v.trim()) throw new HomeAgentError('BAD_ARGUMENT', `missing "${key}" (a non-empty string)`);
  return v;
}
