/**
 * Process plugins (issue 17 "Process plugins"; seed 001 "External subprocess
 * plugin", "The Three Communication Planes", "Subprocess lifecycle
 * management"): the plugin runs as a child process speaking newline-delimited
 * JSON-RPC 2.0 on stdin/stdout (protocol in ./protocol.ts, reference for
 * authors in docs/PLUGINS.md "Process plugins (JSON-RPC)").
 *
 * - The child runs in the bubblewrap sandbox when it works (./sandbox.ts),
 *   else unsandboxed with a plain warning (capabilities advisory).
 * - It is spawned detached, in a process group of its own; stopping it sends
 *   `shutdown`, closes its stdin, waits core.plugins.kill_grace_ms, then
 *   SIGTERMs the group, waits again and SIGKILLs the group; whatever is left
 *   of the group after the leader exits is SIGKILLed too (grandchildren). In
 *   the sandbox the PID namespace and --die-with-parent are the backstops
 *   (outside it `setpriv --pdeathsig KILL`), and
 *   systemd's KillMode=mixed kills what remains of the cgroup when the service
 *   stops. The waiting loop is the child's 'exit' event, never stdout EOF (a
 *   grandchild may hold stdout open after the plugin died).
 * - A line longer than core.plugins.max_line_bytes, more than
 *   core.plugins.max_lines_per_s lines in a second, more than
 *   core.plugins.max_garbage_lines non-JSON-RPC lines within 10 s, a kernel→
 *   plugin backlog the child does not read, an exit, or a call past its time
 *   limit (manifest call_timeout_ms, else core.plugins.call_timeout_ms) kill
 *   the child and report `sdk.crashed`: the host detaches everything at once
 *   and restarts it with back-off (src/kernel/plugin-host.ts).
 * - A stage handler gets the stage's limit (core.agent.stage_timeout_ms, or
 *   the plugin's own `timeout_ms`, never above the call timeout); the stage
 *   host treats a handler past it as failed — before_toolcall fails closed
 *   (src/kernel/stages.ts, seed 000 §3) — and the plugin is restarted.
 * - The SDK handed to start() may be wrapped by capability checks that throw
 *   HomeAgentError PERMISSION_DENIED: such a refusal becomes a JSON-RPC error
 *   (-32001) for the plugin and a warning in the log; it never crashes it.
 * - stderr goes to the log under `plugin:<name>`, line by line, at most
 *   core.plugins.stderr_lines_per_s lines a second (the rest are counted).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { HomeAgentError, StageAccessError, errorMessage } from '../../kernel/errors.js';
import { systemClock, type Clock, type TimerHandle } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/log-types.js';
import type { EventType } from '../../kernel/events.js';
import type { StageContext, StageName, ToolContext } from '../../kernel/stage-types.js';
import type { Level } from '../../kernel/turn-types.js';
import type { OutputMessage } from '../../kernel/output-types.js';
import type { SettingsAPI } from '../../kernel/settings-types.js';
import type { PluginManifest } from './manifest.js';
import { PROTOCOL_VERSION, RPC_ERRORS, type InitializeParams, type InitializeResult, type RegisterOutputChannelParams, type RegisterStageParams, type RegisterToolParams, type StageRunResult, type SubscribeParams, type ToolCallResult } from './protocol.js';
import { LineReader, RpcError, RpcPeer } from './rpc.js';
import { capsFromNames, jsonCopy, obj, str, toRpcError, wireContext } from './wire.js';
import { RateCap, StderrLogger, killGroup, liveChildren, pdeathsigPrefix, track } from './child.js';
import { SANDBOX_PLUGIN_DIR, SANDBOX_STATE_DIR, sandboxArgv, sandboxStatus, type SandboxMode } from './sandbox.js';

/** Options of a process plugin: its manifest, its folder and its private state folder. */
export interface ProcessPluginOptions {
  manifest: PluginManifest;
  /** The plugin's folder (holds plugin.json). */
  dir: string;
  /** A private folder the plugin may write (its state); created when missing. */
  stateDir: string;
  /** The capabilities the user approved (default: the manifest's); `network` opens the sandbox's network. */
  granted?: readonly string[];
  /** Time source of call time limits (tests: FakeClock); default the system clock. */
  clock?: Clock;
  /** Overrides core.plugins.sandbox. */
  sandbox?: SandboxMode;
  /**
   * The box's settings, for the runtime's own limits (core.plugins.*,
   * core.agent.stage_timeout_ms). The loader passes them: the restricted SDK
   * the plugin gets reads only plugin.<name>.*. Default: the SDK's settings.
   */
  coreSettings?: SettingsAPI;
  /** The HomeAgent version sent in `initialize`. */
  homeagentVersion?: string;
}

/** Counters of one plugin across its lives, for `plugins` and tests. */
export interface ProcessPluginStats {
  /** Children started. */
  spawns: number;
  /** Lines on stdout that were not JSON-RPC 2.0. */
  garbage_lines: number;
  /** stderr lines not logged because of the rate cap. */
  stderr_dropped: number;
  /** Calls the plugin made that were refused (capabilities, duplicates, bad params). */
  refused_calls: number;
  /** Whether the current child runs in the sandbox. */
  sandboxed: boolean;
  /** Why the last child was killed or died. */
  last_exit?: string;
}

/** Limits read from settings at each start. */
interface Limits {
  callTimeoutMs: number;
  maxLineBytes: number;
  maxLinesPerS: number;
  maxGarbage: number;
  graceMs: number;
  stderrLinesPerS: number;
  maxBacklogBytes: number;
}

type Phase = 'starting' | 'running' | 'stopping' | 'dead';

/** Events waiting to be written to one plugin before it counts as not keeping up (hung). */
const MAX_QUEUED_EVENTS = 10_000;

/** One child process and everything tied to it. */
interface Life {
  child: ChildProcess;
  peer: RpcPeer;
  phase: Phase;
  windowOpen: boolean;
  exited: Promise<void>;
  hasExited: boolean;
  /** Rejects start() when the child fails during the start window. */
  failStart: (err: Error) => void;
  lineWindowStart: number;
  linesInWindow: number;
  garbageWindowStart: number;
  garbageInWindow: number;
  unsubscribes: Array<() => void>;
  /** Events published for the plugin and not yet written (flushed after the publisher's tick). */
  events: Array<{ type: string; payload: unknown }>;
}

/** A plugin that runs as a child process speaking JSON-RPC 2.0. */
export class ProcessPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  /** Counters across lives (tests, `plugins`). */
  readonly stats: ProcessPluginStats = { spawns: 0, garbage_lines: 0, stderr_dropped: 0, refused_calls: 0, sandboxed: false };
  private life: Life | undefined;
  private sdk: PluginSDK | undefined;
  private log: Logger | undefined;
  private limits: Limits | undefined;
  private readonly clock: Clock;
  private readonly logCap: RateCap;
  private stderrCap: RateCap | undefined;

  constructor(readonly opts: ProcessPluginOptions) {
    this.name = opts.manifest.name;
    this.clock = opts.clock ?? systemClock;
    this.logCap = new RateCap(10, this.clock);
  }

  /** Calls to the plugin waiting for an answer (tests wait for a hung call). */
  get pendingCalls(): number {
    return this.life?.peer.pendingCount ?? 0;
  }

  /** The current child's PID (its process group's id), when one runs. */
  get pid(): number | undefined {
    return this.life && !this.life.hasExited ? this.life.child.pid : undefined;
  }

  private granted(): readonly string[] {
    return this.opts.granted ?? this.opts.manifest.capabilities;
  }

  private readLimits(sdk: PluginSDK): Limits {
    const s = this.opts.coreSettings ?? sdk.settings();
    const num = (key: string, dflt: number): number => {
      try {
        const v = Number(s.get<number>(key));
        return Number.isFinite(v) && v > 0 ? v : dflt;
      } catch {
        return dflt;
      }
    };
    const maxLineBytes = num('core.plugins.max_line_bytes', 1 << 20);
    return {
      callTimeoutMs: this.opts.manifest.call_timeout_ms ?? num('core.plugins.call_timeout_ms', 10_000),
      maxLineBytes,
      maxLinesPerS: num('core.plugins.max_lines_per_s', 5000),
      maxGarbage: num('core.plugins.max_garbage_lines', 100),
      graceMs: num('core.plugins.kill_grace_ms', 1500),
      stderrLinesPerS: num('core.plugins.stderr_lines_per_s', 20),
      maxBacklogBytes: Math.max(4 * maxLineBytes, 8 << 20),
    };
  }

  private sandboxMode(sdk: PluginSDK): SandboxMode {
    if (this.opts.sandbox) return this.opts.sandbox;
    try {
      const v = (this.opts.coreSettings ?? sdk.settings()).get<string>('core.plugins.sandbox');
      return v === 'off' || v === 'required' ? v : 'auto';
    } catch {
      return 'auto';
    }
  }

  /** The command line of the entry (manifest `entry`), with paths as the child sees them. */
  private command(base: string): string[] {
    const entry = this.opts.manifest.entry;
    if (entry === undefined) throw new HomeAgentError('PLUGIN_MANIFEST', `plugin ${this.name}: plugin.json has no "entry"`);
    const inFolder = (f: string): string => (path.isAbsolute(f) ? f : path.posix.join(base, f));
    if (Array.isArray(entry)) {
      const [cmd, ...args] = entry;
      const exe = cmd === 'node' ? process.execPath : cmd!.includes('/') ? inFolder(cmd!) : cmd!;
      return [exe, ...args];
    }
    if (/\.py$/.test(entry)) return ['python3', inFolder(entry)];
    if (/\.(m|c)?js$/.test(entry)) return [process.execPath, inFolder(entry)];
    return [inFolder(entry)];
  }

  async start(sdk: PluginSDK): Promise<void> {
    if (this.life && !this.life.hasExited) await this.stop();
    this.sdk = sdk;
    this.log = sdk.log;
    const limits = (this.limits = this.readLimits(sdk));
    const log = sdk.log;
    mkdirSync(this.opts.stateDir, { recursive: true });
    const mode = this.sandboxMode(sdk);
    const sb = sandboxStatus(mode);
    if (mode === 'required' && !sb.confined) throw new HomeAgentError('PLUGIN_SANDBOX', `plugin ${this.name}: ${sb.summary}`);
    const network = this.granted().includes('network');
    const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', HOMEAGENT_PLUGIN: this.name };
    let argv: string[];
    let cwd: string;
    if (sb.confined) {
      Object.assign(env, { HOME: SANDBOX_STATE_DIR, HOMEAGENT_PLUGIN_DIR: SANDBOX_PLUGIN_DIR, HOMEAGENT_PLUGIN_STATE: SANDBOX_STATE_DIR, TMPDIR: '/tmp' });
      argv = sandboxArgv({ dir: path.resolve(this.opts.dir), stateDir: path.resolve(this.opts.stateDir), network, argv: this.command(SANDBOX_PLUGIN_DIR), env });
      cwd = this.opts.dir;
    } else {
      Object.assign(env, { HOME: path.resolve(this.opts.stateDir), HOMEAGENT_PLUGIN_DIR: path.resolve(this.opts.dir), HOMEAGENT_PLUGIN_STATE: path.resolve(this.opts.stateDir) });
      argv = [...pdeathsigPrefix(), ...this.command(path.resolve(this.opts.dir))];
      cwd = this.opts.dir;
      log.warn({ sandbox: sb.reason }, `plugin runs UNSANDBOXED: ${sb.summary}`);
    }
    this.stats.sandboxed = sb.confined;
    this.stats.spawns++;

    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let failStart: (err: Error) => void = () => undefined;
    const startFailed = new Promise<never>((_, reject) => (failStart = reject));
    startFailed.catch(() => undefined);
    let resolveExited: () => void = () => undefined;
    const exited = new Promise<void>((r) => (resolveExited = r));
    const life: Life = {
      child,
      peer: undefined as unknown as RpcPeer,
      phase: 'starting',
      windowOpen: true,
      exited,
      hasExited: false,
      failStart,
      lineWindowStart: this.clock.monotonic(),
      linesInWindow: 0,
      garbageWindowStart: this.clock.monotonic(),
      garbageInWindow: 0,
      unsubscribes: [],
      events: [],
    };
    this.life = life;

    life.peer = new RpcPeer(
      (line) => this.write(life, line),
      {
        request: (method, params) => this.onRequest(life, method, params),
        notification: (method, params) => this.onNotification(life, method, params),
        garbage: (line, why) => this.onGarbage(life, line, why),
      },
      { setTimeout: (fn, ms) => this.clock.setTimeout(fn, ms, { keepAlive: true }), clearTimeout: (h) => this.clock.clearTimeout(h as TimerHandle) },
    );

    this.stderrCap = new RateCap(limits.stderrLinesPerS, this.clock);
    const stderr = new StderrLogger(log, this.stderrCap, (n) => (this.stats.stderr_dropped += n));
    child.on('error', (err) => {
      // Never spawned (no such program): there will be no 'exit' event.
      if (child.pid === undefined && !life.hasExited) {
        liveChildren.delete(child);
        life.hasExited = true;
        resolveExited();
      }
      this.fail(life, `cannot run ${argv[0]}: ${errorMessage(err)}`);
    });
    track(child);
    child.on('exit', (code, signal) => {
      liveChildren.delete(child);
      life.hasExited = true;
      // Sweep the group: grandchildren the plugin left behind die with it.
      killGroup(child, 'SIGKILL');
      resolveExited();
      const last = stderr.lastLine();
      const why = (signal ? `exited on ${signal}` : `exited with code ${code}`) + (last && life.phase === 'starting' ? ` (its last stderr line: ${last.slice(0, 200)})` : '');
      this.stats.last_exit ??= why;
      this.fail(life, `plugin process ${why}`);
    });
    child.stdin!.on('error', () => undefined); // EPIPE: the exit event tells
    const reader = new LineReader(limits.maxLineBytes, (line) => this.onLine(life, line));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (life.phase === 'dead') return;
      if (reader.push(chunk) === 'overflow') this.fail(life, `a line on stdout is longer than core.plugins.max_line_bytes (${limits.maxLineBytes} bytes)`);
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stderr!.on('end', () => stderr.flush());

    const handshake = async (): Promise<void> => {
      const init: InitializeParams = {
        protocol: PROTOCOL_VERSION,
        plugin: this.name,
        homeagent: this.opts.homeagentVersion ?? '0',
        capabilities: [...this.granted()],
        settings: this.pluginSettings(sdk),
        state_dir: sb.confined ? SANDBOX_STATE_DIR : path.resolve(this.opts.stateDir),
        plugin_dir: sb.confined ? SANDBOX_PLUGIN_DIR : path.resolve(this.opts.dir),
        sandboxed: sb.confined,
      };
      const res = await life.peer.call<InitializeResult>('initialize', init, { timeoutMs: limits.callTimeoutMs });
      if (!res || typeof res !== 'object' || res.protocol !== PROTOCOL_VERSION) {
        throw new HomeAgentError('PLUGIN_PROTOCOL', `plugin ${this.name} speaks protocol ${JSON.stringify((res as InitializeResult | null)?.protocol)}; this HomeAgent speaks ${PROTOCOL_VERSION}`);
      }
      await life.peer.call('start', {}, { timeoutMs: limits.callTimeoutMs });
    };
    try {
      await Promise.race([handshake(), startFailed]);
    } catch (err) {
      const msg = err instanceof RpcError && err.rpcCode === RPC_ERRORS.TIMEOUT ? `plugin ${this.name} did not finish its start: ${err.message}` : errorMessage(err);
      await this.kill(life, msg);
      throw err instanceof HomeAgentError ? err : new HomeAgentError('PLUGIN_START', msg);
    }
    life.windowOpen = false;
    life.phase = 'running';
    log.info({ pid: child.pid, sandboxed: sb.confined }, 'process plugin running');
  }

  /** The plugin's own settings (`plugin.<name>.*`, prefix removed). */
  private pluginSettings(sdk: PluginSDK): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const prefix = `plugin.${this.name}.`;
    try {
      for (const s of sdk.settings().list(prefix)) if (s.key.startsWith(prefix)) out[s.key.slice(prefix.length)] = s.value;
    } catch {
      /* no settings */
    }
    return out;
  }

  /** Write one line to the child; a child that stops reading (backlog over the cap) is treated as hung. */
  private write(life: Life, line: string): void {
    const stdin = life.child.stdin;
    if (life.hasExited || !stdin || !stdin.writable) throw new Error('the plugin process is gone');
    // Events published before this message go first: the plugin sees them in order.
    if (life.events.length) this.flushEvents(life);
    stdin.write(line + '\n');
    if (stdin.writableLength > this.limits!.maxBacklogBytes) this.fail(life, `the plugin does not read its input (${stdin.writableLength} bytes waiting)`);
  }

  private onLine(life: Life, line: string): void {
    const now = this.clock.monotonic();
    if (now - life.lineWindowStart >= 1000) {
      life.lineWindowStart = now;
      life.linesInWindow = 0;
    }
    if (++life.linesInWindow > this.limits!.maxLinesPerS) {
      this.fail(life, `flood: more than ${this.limits!.maxLinesPerS} lines a second on stdout (core.plugins.max_lines_per_s)`);
      return;
    }
    life.peer.receive(line);
  }

  private onGarbage(life: Life, line: string, why: string): void {
    this.stats.garbage_lines++;
    const now = this.clock.monotonic();
    if (now - life.garbageWindowStart >= 10_000) {
      life.garbageWindowStart = now;
      life.garbageInWindow = 0;
    }
    life.garbageInWindow++;
    if (life.garbageInWindow <= 5) this.log?.warn({ line: line.slice(0, 200), why }, 'plugin wrote a line that is not JSON-RPC; ignored (write logs to stderr)');
    if (life.garbageInWindow > this.limits!.maxGarbage) this.fail(life, `flood of garbage: more than ${this.limits!.maxGarbage} lines that are not JSON-RPC within 10 s (core.plugins.max_garbage_lines)`);
  }

  /**
   * The plugin died or misbehaved: kill its group; during start, fail the
   * start; while running, report a crash (the host detaches and restarts).
   */
  private fail(life: Life, reason: string): void {
    if (life.phase === 'dead' || life.phase === 'stopping') {
      if (life.phase === 'stopping') life.peer.close(reason);
      return;
    }
    const phase = life.phase;
    life.phase = 'dead';
    this.stats.last_exit = reason;
    life.peer.close(reason);
    for (const u of life.unsubscribes.splice(0)) u();
    if (!life.hasExited) killGroup(life.child, 'SIGKILL');
    if (phase === 'starting') life.failStart(new HomeAgentError('PLUGIN_START', `plugin ${this.name}: ${reason}`));
    else {
      this.log?.error({ reason }, 'process plugin failed; it is killed and restarted');
      this.sdk?.crashed(reason);
    }
  }

  /** Kill a child at once and wait for its exit (failed starts). */
  private async kill(life: Life, reason: string): Promise<void> {
    if (life.phase !== 'dead') {
      life.phase = 'dead';
      life.peer.close(reason);
      for (const u of life.unsubscribes.splice(0)) u();
    }
    if (!life.hasExited) killGroup(life.child, 'SIGKILL');
    await life.exited;
  }

  /**
   * Stop the child: `shutdown`, close stdin, wait the grace, SIGTERM the
   * group, wait the grace, SIGKILL the group. Resolves once it has exited.
   * Never throws.
   */
  async stop(): Promise<void> {
    const life = this.life;
    if (!life) return;
    this.life = undefined;
    for (const u of life.unsubscribes.splice(0)) u();
    if (life.hasExited) return;
    if (life.phase === 'dead') {
      await life.exited;
      return;
    }
    life.phase = 'stopping';
    life.windowOpen = false;
    const grace = this.limits?.graceMs ?? 1500;
    const exitedWithin = (ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        if (life.hasExited) return resolve(true);
        const t = setTimeout(() => resolve(false), ms);
        void life.exited.then(() => {
          clearTimeout(t);
          resolve(true);
        });
      });
    life.peer.call('shutdown', {}).catch(() => undefined);
    life.child.stdin?.end();
    if (await exitedWithin(grace)) return;
    this.log?.warn({ pid: life.child.pid }, 'plugin did not exit after shutdown; SIGTERM to its process group');
    killGroup(life.child, 'SIGTERM');
    if (await exitedWithin(grace)) return;
    this.log?.warn({ pid: life.child.pid }, 'plugin ignored SIGTERM; SIGKILL to its process group');
    killGroup(life.child, 'SIGKILL');
    await life.exited;
  }

  // ---- plugin → kernel -------------------------------------------------

  private refused(method: string, err: unknown): RpcError {
    const e = toRpcError(err);
    this.stats.refused_calls++;
    // At most 10 refusals a second reach the log; a plugin cannot flood it by asking again and again.
    if (this.logCap.allow()) {
      if (e.rpcCode === RPC_ERRORS.PERMISSION_DENIED) this.log?.warn({ method, err: e.message }, 'plugin call refused: capability not granted');
      else this.log?.warn({ method, err: e.message }, 'plugin call refused');
    }
    return e;
  }

  private inWindow(life: Life, method: string): void {
    if (!life.windowOpen) throw new RpcError(RPC_ERRORS.WINDOW_CLOSED, `${method}: registrations are only accepted while the start request is pending`);
  }

  private async onRequest(life: Life, method: string, params: unknown): Promise<unknown> {
    if (life.phase === 'dead' || life.phase === 'stopping') throw new RpcError(RPC_ERRORS.CANCELLED, 'the plugin is stopping');
    const sdk = this.sdk!;
    try {
      switch (method) {
        case 'register_tool':
          return this.registerTool(life, obj(params, method) as unknown as RegisterToolParams);
        case 'register_stage':
          return this.registerStage(life, obj(params, method) as unknown as RegisterStageParams);
        case 'subscribe':
          return this.subscribe(life, obj(params, method) as unknown as SubscribeParams);
        case 'register_output_channel':
          return this.registerOutput(life, obj(params, method) as unknown as RegisterOutputChannelParams);
        case 'publish': {
          const p = obj(params, method);
          const type = str(p, 'type', method);
          // A plugin publishes only its own events: it cannot forge raw_input, stop or another plugin's events.
          if (!type.startsWith(`plugin.${this.name}.`)) throw new RpcError(RPC_ERRORS.PERMISSION_DENIED, `publish: a plugin publishes only events named plugin.${this.name}.*; "${type}" is not one`, { code: 'PERMISSION_DENIED' });
          sdk.publish(type as EventType, (p.payload ?? {}) as never);
          return {};
        }
        case 'inject': {
          const p = obj(params, method);
          const channel = str(p, 'channel', method);
          const text = str(p, 'text', method);
          const level = p.level === undefined ? 0 : Number(p.level);
          if (!Number.isInteger(level) || level < 0 || level > 4) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, 'inject: level must be 0 (a queued input) or 1-4 (an interrupt)');
          const r = level === 0 ? await sdk.injectInput(channel, text) : await sdk.injectInterrupt(level as Level, channel, text);
          return { input_id: r.input_id, status: r.status, reply: r.reply };
        }
        case 'settings.get': {
          const key = str(obj(params, method), 'key', method);
          return { value: this.pluginSettings(sdk)[key] ?? null };
        }
        case 'memory.recall': {
          const p = obj(params, method);
          const items = await sdk.memory().recall(str(p, 'query', method), typeof p.limit === 'number' ? p.limit : undefined);
          return { items: jsonCopy(items) ?? [] };
        }
        case 'social.list_persons':
          return { persons: jsonCopy(await sdk.social().listPersons()) ?? [] };
        case 'social.get_person':
          return { person: jsonCopy(await sdk.social().getPerson(str(obj(params, method), 'name', method))) ?? null };
        case 'social.get_relations':
          return { relations: jsonCopy(await sdk.social().getRelations(str(obj(params, method), 'name', method))) ?? [] };
        default:
          throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `unknown method "${method}"`);
      }
    } catch (err) {
      throw this.refused(method, err);
    }
  }

  private onNotification(life: Life, method: string, params: unknown): void {
    if (method === 'log') {
      const p = (params && typeof params === 'object' ? params : {}) as { level?: string; message?: unknown; data?: unknown };
      const level = p.level === 'debug' || p.level === 'warn' || p.level === 'error' ? p.level : 'info';
      // `log` lines share stderr's rate cap (core.plugins.stderr_lines_per_s).
      if (!this.stderrCap?.allow()) {
        this.stats.stderr_dropped++;
        return;
      }
      this.log?.[level]({ ...(p.data && typeof p.data === 'object' ? (p.data as object) : {}), from: 'plugin' }, String(p.message ?? '').slice(0, 2000));
      return;
    }
    if (method === 'cancel') return; // the kernel never runs long calls for a plugin; nothing to cancel
    this.onGarbage(life, JSON.stringify({ method }), `unknown notification "${method}"`);
  }

  private registerTool(life: Life, p: RegisterToolParams): object {
    this.inWindow(life, 'register_tool');
    const name = str(p as unknown as Record<string, unknown>, 'name', 'register_tool');
    if (!p.parameters || typeof p.parameters !== 'object' || Array.isArray(p.parameters)) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, 'register_tool: "parameters" must be a JSON Schema object');
    const limit = Math.min(typeof p.timeout_ms === 'number' && p.timeout_ms > 0 ? p.timeout_ms : this.limits!.callTimeoutMs, this.limits!.callTimeoutMs);
    this.sdk!.registerTool({
      name,
      description: typeof p.description === 'string' ? p.description : '',
      parameters: p.parameters as never,
      ...(typeof p.group === 'string' ? { group: p.group } : {}),
      ...(p.no_memory === true ? { no_memory: true } : {}),
      // The registry's own limit stays behind ours: ours restarts the plugin.
      timeout_ms: limit + 1000,
      handler: (args, ctx) => this.callTool(life, name, args, ctx, limit),
    });
    return {};
  }

  private async callTool(life: Life, name: string, args: Record<string, unknown>, ctx: ToolContext, limit: number): Promise<unknown> {
    // Callable from its registration on (the start window included): the plugin answers calls once it registered.
    if (life.phase !== 'running' && life.phase !== 'starting') throw new HomeAgentError('PLUGIN_UNAVAILABLE', `plugin ${this.name} is not running`);
    let res: ToolCallResult;
    try {
      res = await life.peer.call<ToolCallResult>(
        'tool.call',
        { name, args, call_id: ctx.call_id, input: { id: ctx.input.id, channel: ctx.input.channel, text: ctx.input.text, source: ctx.input.source } },
        { timeoutMs: limit, signal: ctx.signal },
      );
    } catch (err) {
      throw this.callFailed(life, `tool ${name}`, err);
    }
    if (!res || typeof res !== 'object') return res;
    if (res.is_error) throw new HomeAgentError('PLUGIN_TOOL_ERROR', typeof res.content === 'string' ? res.content : JSON.stringify(res.content));
    return res.content;
  }

  /** A call to the plugin failed: a timeout restarts the plugin; the error names the plugin. */
  private callFailed(life: Life, what: string, err: unknown): HomeAgentError {
    if (err instanceof RpcError) {
      if (err.rpcCode === RPC_ERRORS.TIMEOUT) {
        this.fail(life, `${what} timed out (${err.message}); the plugin is restarted`);
        return new HomeAgentError('PLUGIN_TIMEOUT', `plugin ${this.name}: ${what}: ${err.message}`);
      }
      if (err.rpcCode === RPC_ERRORS.CANCELLED) return new HomeAgentError('PLUGIN_CANCELLED', `plugin ${this.name}: ${what}: ${err.message}`);
      return new HomeAgentError(err.data?.code ?? 'PLUGIN_ERROR', `plugin ${this.name}: ${what}: ${err.message}`);
    }
    return new HomeAgentError('PLUGIN_ERROR', `plugin ${this.name}: ${what}: ${errorMessage(err)}`);
  }

  private registerStage(life: Life, p: RegisterStageParams): object {
    this.inWindow(life, 'register_stage');
    const stage = str(p as unknown as Record<string, unknown>, 'stage', 'register_stage') as StageName;
    const own = typeof p.timeout_ms === 'number' && p.timeout_ms > 0 ? Math.min(p.timeout_ms, this.limits!.callTimeoutMs) : undefined;
    const sdk = this.sdk!;
    const handler = async (ctx: StageContext): Promise<void> => {
      if (life.phase !== 'running' && life.phase !== 'starting') throw new HomeAgentError('PLUGIN_UNAVAILABLE', `plugin ${this.name} is not running`);
      let limit = own;
      if (limit === undefined) {
        try {
          limit = Number((this.opts.coreSettings ?? sdk.settings()).get<number>('core.agent.stage_timeout_ms')) || 5000;
        } catch {
          limit = 5000;
        }
        limit = Math.min(limit, this.limits!.callTimeoutMs);
      }
      let res: StageRunResult;
      try {
        res = await life.peer.call<StageRunResult>('stage.run', wireContext(ctx), { timeoutMs: limit, signal: ctx.signal });
      } catch (err) {
        throw this.callFailed(life, `stage ${stage}`, err);
      }
      const set = res && typeof res === 'object' ? res.set : undefined;
      if (set && typeof set === 'object') {
        for (const [k, v] of Object.entries(set)) {
          // The view enforces the stage's write rights (seed 000 §3): a field the stage may not write throws.
          if (k === 'stage' || k === 'input') throw new StageAccessError(ctx.stage, k);
          (ctx as unknown as Record<string, unknown>)[k] = v;
        }
      }
    };
    sdk.registerStage(stage, handler, own !== undefined ? { timeout_ms: own } : undefined);
    return {};
  }

  private subscribe(life: Life, p: SubscribeParams): object {
    this.inWindow(life, 'subscribe');
    const type = str(p as unknown as Record<string, unknown>, 'event', 'subscribe') as EventType;
    const un = this.sdk!.subscribe(type, (payload) => {
      if (life.phase !== 'running') return;
      // The publisher never waits for a plugin (seed 001: the kernel must never block on a consumer):
      // events are queued here and encoded and written after the publisher's tick.
      if (life.events.length >= MAX_QUEUED_EVENTS) {
        this.fail(life, `the plugin does not keep up with its events (${MAX_QUEUED_EVENTS} waiting)`);
        return;
      }
      life.events.push({ type, payload });
      if (life.events.length === 1) setImmediate(() => this.flushEvents(life));
    });
    life.unsubscribes.push(un);
    return {};
  }

  /** Write the queued events of `life` to the plugin, in order. */
  private flushEvents(life: Life): void {
    const batch = life.events.splice(0);
    if (life.phase !== 'running') return;
    for (const e of batch) {
      try {
        life.peer.notify('event', { type: e.type, payload: jsonCopy(e.payload) ?? null });
      } catch {
        return; // gone: the exit event reports it
      }
    }
  }

  private registerOutput(life: Life, p: RegisterOutputChannelParams): object {
    this.inWindow(life, 'register_output_channel');
    const name = str(p as unknown as Record<string, unknown>, 'name', 'register_output_channel');
    const caps = capsFromNames(p.caps);
    this.sdk!.registerOutputChannel(name, caps, typeof p.description === 'string' ? p.description : '', async (msg: OutputMessage) => {
      if (life.phase !== 'running' && life.phase !== 'starting') throw new HomeAgentError('PLUGIN_UNAVAILABLE', `plugin ${this.name} is not running`);
      try {
        await life.peer.call('output.deliver', { channel: name, message: jsonCopy(msg) }, { timeoutMs: this.limits!.callTimeoutMs });
      } catch (err) {
        throw this.callFailed(life, `output ${name}`, err);
      }
    });
    return {};
  }
}
