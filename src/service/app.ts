/**
 * The service (`homeagent run`): opens the settings, builds the kernel with
 * the LLM provider manager, and starts the built-in plugins from an explicit
 * list, each in its own guard (zigbee2mqtt controller style). With no broker
 * configured it starts the embedded one; on a machine without audio or GPIO
 * the HAL picks the simulators and says so, and a demo home is announced so a
 * newcomer can try device commands at once. Tells systemd READY / WATCHDOG /
 * STOPPING; shuts down cleanly on SIGINT/SIGTERM.
 */
import { serviceOnDataDir } from '../cli/find-service.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../config/registry.js';
import { INSTALL_ROOT, Kernel } from '../kernel/kernel.js';
import { createLogger, logTo, recentProblems } from '../kernel/log.js';
import type { Logger } from '../kernel/log-types.js';
import type { Plugin } from '../kernel/sdk.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import { SqliteRunLog } from '../kernel/run-log.js';
import { ConsolePlugin, type ConsoleBanner } from '../plugins/console/index.js';
import { ControlPlugin, socketAnswers } from '../plugins/control/index.js';
import type { CommandHandler } from '../kernel/commands.js';
import { defaultSocketPath } from '../cli/client.js';
import { ProviderManager, registerProviderSettings } from '../providers/manager.js';
import { HomePlugin, DemoHomeSimulator, DEMO_NODE, HOME_SETTINGS } from '../home/index.js';
import { TimersPlugin } from '../plugins/timers/index.js';
import { ListsPlugin } from '../plugins/lists/index.js';
import { LIST_NAMES } from '../plugins/lists/list-service.js';
import { GpioPlugin, SerialPlugin, CameraPlugin, SimGpioDriver } from '../../hal/index.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './embedded-broker.js';
import { notifyReady, notifyStopping, startWatchdog, type WatchdogHandle } from './sd-notify.js';
import { isJournalStream, journalDestination } from './journal-stream.js';
import { doctorInputFromSettings, runDoctor } from './doctor.js';
import { optionalPluginHint, registerServiceSettings } from './settings.js';
import { audioSimulated, VoiceServicePlugin } from './voice-wiring.js';
import { AssistantStatePlugin } from '../voice/assistant-state-plugin.js';
import { DiskKeeper } from './disk-keeper.js';
import { wireForgetting } from './forgetting.js';
import { buildMemory, type MemoryWiring } from './memory-wiring.js';
import { WebUIPlugin } from '../plugins/webui/index.js';
import { McpServerPlugin } from '../plugins/mcp-server/index.js';
import { randomUUID } from 'node:crypto';
import { ApprovalStore } from '../plugins/external/approvals.js';
import { ExternalPlugins, type ExternalPluginInfo } from '../plugins/external/loader.js';
import { SkillCatalog, SkillsPlugin } from '../plugins/external/skills.js';
import type { DeviceAccess } from '../plugins/external/restricted-sdk.js';
import { sandboxAvailable } from '../plugins/external/sandbox-probe.js';
import { newStageContext } from '../kernel/stages.js';
import { bannerWakeLine, cliCommandFor, listenCommandFor } from './wake-ways.js';
import type { PluginStatus } from '../kernel/plugin-host.js';
import { pluginApplying } from '../config/plugin-restart.js';

/** Options of `homeagent run`. */
export interface AppOptions {
  dataDir: string;
  /** Attach the text console to stdin/stdout (default: when stdin is a TTY). */
  console?: boolean;
  socketPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Port of the embedded broker when no broker is configured (default core.service.embedded_broker_port, 1883; 0 = any free port). */
  embeddedBrokerPort?: number;
  /** Where the logs go while the console is attached (routeLogsForConsole); the console's banner says it. */
  logFile?: string;
}

/** A running service. */
export interface App {
  kernel: Kernel;
  settings: ConfigRegistry;
  control: ControlPlugin;
  providers: ProviderManager;
  home: HomePlugin;
  timers: TimersPlugin;
  /** The shopping list and the to-do list (its `service` is the API a WebUI calls). */
  lists: ListsPlugin;
  /** The voice plugin (running, or failed to start: then the box is text-only). */
  voice: VoiceServicePlugin;
  memory?: MemoryWiring;
  /** The WebUI (issue 16): pages and the HTTP API on plugin.webui.port. */
  webui: WebUIPlugin;
  /** Plugins from outside (issue 17): <data dir>/plugins and the package's plugins/; undefined when their approvals store is unusable. */
  external?: ExternalPlugins;
  /** The running skills (SKILL.md plugins). */
  skills: SkillCatalog;
  broker?: EmbeddedBroker;
  brokerUrl: string;
  /** Bounds the run log and log files, caps the memory (issue 18 "Nothing grows without bound"). */
  disk: DiskKeeper;
  dataDir: string;
  socketPath: string;
  startedAt: number;
  stop(): Promise<void>;
}

/** Build and start the service. */
export async function startApp(opts: AppOptions): Promise<App> {
  const env = opts.env ?? process.env;
  const log = createLogger('service');
  mkdirSync(opts.dataDir, { recursive: true });
  // One service per data directory: a second one would share the databases and the box's MQTT identity.
  const socketPath0 = opts.socketPath ?? defaultSocketPath(opts.dataDir, env);
  if (await socketAnswers(socketPath0)) {
    throw new HomeAgentError('ALREADY_RUNNING', `another homeagent is already running with data directory ${opts.dataDir} (its socket ${socketPath0} answers); stop it first (systemctl stop homeagent) or use another --data-dir`);
  }
  // The same data directory with its socket elsewhere (--socket): found from /proc. Two services on one data directory
  // took the box's MQTT identity from each other (a breaking tester's: 51 reconnects in 40 s).
  const other = serviceOnDataDir(opts.dataDir);
  if (other && other.pid !== process.pid && (await socketAnswers(other.socket))) {
    throw new HomeAgentError('ALREADY_RUNNING', `another homeagent is already running with data directory ${opts.dataDir} (process ${other.pid}, its socket ${other.socket}); stop it first or use another --data-dir`);
  }
  const settings = new ConfigRegistry(path.join(opts.dataDir, 'settings.db'), { env });
  registerServiceSettings(settings);
  registerProviderSettings(settings);
  for (const def of HOME_SETTINGS) settings.register(def);
  const providers = new ProviderManager({ settings, adaptersDir: path.join(INSTALL_ROOT, 'adapters') });

  let kernel!: Kernel;
  const memory = await buildMemory({ dataDir: opts.dataDir, settings, log, enqueueConsolidation: (text) => void kernel.injectSelf(text), embedder: () => providers.embedder() });
  kernel = new Kernel({
    settings,
    dataDir: opts.dataDir,
    provider: providers,
    memory: memory.kernelMemory,
    memoryApi: memory.memoryApi,
    knowledgeApi: memory.knowledgeApi,
    socialApi: memory.socialApi,
    runLog: new SqliteRunLog(path.join(opts.dataDir, 'runlog.db')),
  });
  wireForgetting(kernel, memory.system, opts.dataDir, createLogger('forgetting'));

  // The broker: configured, or the embedded one.
  let broker: EmbeddedBroker | undefined;
  let brokerUrl = settings.get<string>('plugin.mqtt.url');
  /** Why the box uses a broker it did not start (the banner's Devices line), when it does. */
  let brokerNote: string | undefined;
  if (!brokerUrl) {
    try {
      broker = await startEmbeddedBroker(createLogger('broker'), opts.embeddedBrokerPort ?? settings.get<number>('core.service.embedded_broker_port'));
      brokerUrl = broker.url;
    } catch (err) {
      const port = opts.embeddedBrokerPort ?? settings.get<number>('core.service.embedded_broker_port');
      brokerUrl = `mqtt://127.0.0.1:${port}`;
      // A second box on this machine joined the first one's broker and showed its devices without a word (a tester).
      const why = err instanceof HomeAgentError && err.code === 'BROKER_PORT_IN_USE' ? `port ${port} is in use` : errorMessage(err);
      brokerNote = `the embedded MQTT broker did not start (${why}), so this box uses what listens on 127.0.0.1:${port} as its broker, with the devices announced there (another HomeAgent's demo home?; homeagent status says whether it is connected); to keep them apart, set core.service.embedded_broker_port or plugin.mqtt.url`;
      log.warn({ err: errorMessage(err), url: brokerUrl }, `embedded broker not started; using the broker already listening on 127.0.0.1:${port}`);
    }
  }

  const socketPath = opts.socketPath ?? defaultSocketPath(opts.dataDir, env);
  const startedAt = Date.now();
  const commands: Record<string, CommandHandler> = {};
  const control = new ControlPlugin({ socketPath, commands, registry: kernel.services.commands });
  const timers = new TimersPlugin();
  const lists = new ListsPlugin();
  // The demo home's devices are taken only while it is announced (this run's choice, made before the plugins start).
  const home = new HomePlugin({ timers, lists, brokerUrl: () => brokerUrl, version: packageVersion(), ignoredNodes: () => (demo ? [] : [DEMO_NODE]) });
  const gpio = new GpioPlugin();
  const voice = new VoiceServicePlugin();
  const webui = new WebUIPlugin({ settings, command: (name) => kernel.services.commands.get(name) ?? commands[name], version: packageVersion(), runLog: () => kernel.services.runLog, memoryGraph: () => memory.system.graph, memoryDocuments: () => memory.system.docs, knowledge: () => memory.system.knowledge, tools: () => kernel.services.tools });

  const disk = new DiskKeeper({
    dataDir: opts.dataDir,
    settings,
    clock: kernel.services.clock,
    log: createLogger('disk'),
    runLog: () => kernel.services.runLog,
    memory: memory.system,
    speakerSimDir: () => {
      let dir = '';
      try {
        dir = settings.get<string>('plugin.speaker.sim_dir');
      } catch {
        /* the speaker plugin did not register its settings */
      }
      return dir || path.join(opts.dataDir, 'speaker-sim');
    },
    busy: () => kernel.agent.stats().running,
  });
  // Pictures keep their own budget (core.memory.images_max_mb, pruned on every write); the keeper shows them with the rest.
  disk.addArea({
    name: 'pictures',
    usedBytes: () => memory.system.pictures.stats().bytes,
    maxBytes: () => memory.system.pictures.stats().budget_bytes,
  });
  let demo: DemoHomeSimulator | undefined;
  let watchdog: WatchdogHandle | undefined;
  let stopping: Promise<void> | undefined;
  const app: App = {
    kernel,
    settings,
    control,
    providers,
    home,
    timers,
    lists,
    voice,
    memory,
    webui,
    skills: new SkillCatalog(),
    broker,
    brokerUrl,
    disk,
    dataDir: opts.dataDir,
    socketPath,
    startedAt,
    stop() {
      stopping ??= (async () => {
        log.info('shutting down');
        void notifyStopping('shutting down');
        watchdog?.stop();
        disk.stop();
        await kernel.stop();
        await demo?.stop().catch(() => undefined);
        providers.close();
        await broker?.close().catch(() => undefined);
        settings.close();
        log.info('stopped');
      })();
      return stopping;
    },
  };

  // The built-in plugins, in start order (each started in its own guard).
  // assistant-state owns the assistant state (LEDs, HA sensor) with or without the voice pipeline.
  const plugins: Plugin[] = [memory.plugin, memory.picturesPlugin, control, new AssistantStatePlugin(), timers, lists, home, gpio];
  // The box's own MCP server is served on the WebUI's server (/mcp), so it starts after it.
  plugins.push(voice, webui, new McpServerPlugin({ webui, kernel: () => kernel.services, version: packageVersion() }));
  // The skill list in the prompt and skill_read (issue 17 "Skills").
  plugins.push(new SkillsPlugin({ catalog: app.skills, sections: () => kernel.services.promptSections }));
  const optional = settings.get<string[]>('core.plugins.optional');
  if (optional.includes('serial')) plugins.push(new SerialPlugin());
  // Snapshots go to the memory's picture store (stored once by sha256, remembered, under the size budget).
  if (optional.includes('camera')) plugins.push(new CameraPlugin({ pictures: memory.system.pictures }));
  // The optional plugins' keys are unknown while they are not started: say how to start them.
  settings.explainUnknown((key) => optionalPluginHint(key, optional, settings.get<unknown>('core.plugins.optional')));
  const useConsole = opts.console ?? !!process.stdin.isTTY;
  // The logs go to a file or the journal while the console is attached (homeagent run: routeLogsForConsole).
  const banner = (): ConsoleBanner => ({
    title: `HomeAgent ${packageVersion()}`,
    simulated: [
      ...(simulated ? ['microphone and speaker (no sound card: spoken replies are written as WAV files to the data directory)'] : []),
      ...(gpio.gpio instanceof SimGpioDriver ? ['buttons and LEDs (no GPIO)'] : []),
      ...(demo ? ['a demo home (Kitchen Light, Living Room Lamp, Front Door lock, Thermostat, Bedroom Temperature) on the embedded MQTT broker'] : []),
    ],
    examples: demo ? ['turn on the kitchen light', 'what is the temperature in the bedroom', 'set a timer for 2 minutes'] : ['what time is it', 'set a timer for 5 minutes', 'what can you do'],
    logs: opts.logFile ?? (isJournalStream(2, env) ? 'the journal (journalctl -u homeagent -f)' : undefined),
    ...(voice.wakeWays ? { voice: bannerWakeLine(voice.wakeWays, listenCommandFor(opts.dataDir, env)) } : {}),
    ...(brokerNote ? { broker: brokerNote } : {}),
  });
  if (useConsole) plugins.push(new ConsolePlugin({ prompt: !!process.stdin.isTTY, banner, cli: cliCommandFor(opts.dataDir, env), onQuit: () => stopWithin(() => app.stop(), settings.get<number>('core.service.stop_deadline_ms'), (code) => process.exit(code), log) }));
  for (const p of plugins) kernel.use(p);
  // Plugins from outside join the host after the built-ins; a bad one is refused or held, never stops the service.
  try {
    app.external = new ExternalPlugins({
      dataDir: opts.dataDir,
      packageDir: path.join(INSTALL_ROOT, 'plugins'),
      host: kernel.host,
      betweenTurns: (fn) => kernel.agent.betweenTurns(fn),
      settings,
      approvals: new ApprovalStore(opts.dataDir),
      skills: app.skills,
      devices: () => deviceAccess(app),
    });
    await app.external.loadAll();
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'plugins from outside not loaded: their approvals store is unusable');
  }
  registerCommands(app, commands);

  // A demo home on the embedded broker when the devices are simulated.
  const demoSetting = settings.get<string>('core.service.demo_home');
  let simulated = true;
  try {
    simulated = audioSimulated(settings, opts.dataDir);
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'audio settings unusable; the voice pipeline will not start');
  }
  if (demoSetting === 'on' || (demoSetting === 'auto' && broker && simulated)) {
    demo = new DemoHomeSimulator({ url: brokerUrl, log: createLogger('demo-home') });
    try {
      await demo.start();
      log.warn('simulated mode: no audio hardware or GPIO found; a demo home (kitchen light, living room lamp, front door lock, thermostat, bedroom sensor) is announced on the embedded broker — try "turn on the kitchen light"');
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'demo home failed to start');
    }
  }

  await kernel.start();
  disk.start();
  const failed = kernel.host.status().filter((s) => s.state === 'failed');
  for (const s of failed) log.error({ plugin: s.name, err: s.error }, 'plugin failed to start; the others run');

  const llmModel = providers.status().sources[0]?.model ?? 'none';
  // The line to wait for in a log (systemd hears READY=1 below): every plugin has started or failed by now.
  log.info({ socket: socketPath, llm_model: llmModel, plugins_failed: failed.length }, 'ready');
  void notifyReady(`listening; LLM ${llmModel}`);
  watchdog = startWatchdog();
  return app;
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(INSTALL_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** The maintenance commands the service itself answers (the control plugin has ask/say/stop/logs/config). */
function registerCommands(app: App, commands: Record<string, CommandHandler>): void {
  const { kernel, providers, home } = app;
  commands.status = () => {
    const p = providers.status();
    const reg = home.registry;
    return {
      uptime_s: Math.round((Date.now() - app.startedAt) / 1000),
      data_dir: app.dataDir,
      llm: { last_source: p.last_source, last_model: p.last_model, sources: p.sources },
      // Dense recall from the provider's embeddings (issue 19): off, indexing with progress, ready, or unavailable.
      embeddings: app.memory?.system.dense.status(),
      // Stored pictures (issue 18 "Pictures"): how many, their bytes against core.memory.images_max_mb, how many a conversation refers to.
      pictures: app.memory?.system.pictures.stats(),
      broker: { url: app.brokerUrl, embedded: !!app.broker, connected: home.connected },
      devices: reg ? reg.entities().length : 0,
      // A risky action waiting for its yes/no (a tester missed it here): the question, where it was asked, until when.
      question: home.gate?.describeOpen(),
      voice: app.voice.describe(),
      // Where the WebUI is (a newcomer looked for its port here).
      webui: app.webui.describe(),
      agent: kernel.agent.stats(),
      // Failed ones with their error, and how often the supervisor restarted each (issue 17 "Supervision").
      plugins: statusPlugins(kernel.host.status()),
      plugins_held: (app.external?.list() ?? []).filter((p) => ['held', 'refused'].includes(p.state) || p.held_version !== undefined).map((p) => ({ name: p.name, state: p.state, ...(p.message ? { message: p.message } : {}) })),
      // Sizes of the run log, memory, log files (issue 18): MB used, bound, warnings.
      disk: app.disk.status(),
      last_errors: recentProblems().slice(-10),
      // Settings read only at start that were changed since (homeagent config set): a restart applies them.
      restart_pending: pendingRestarts(app.settings.restartPending(app.startedAt), kernel.host.status()),
    };
  };
  commands.plugins = () => pluginRows(app);
  const ext = (): ExternalPlugins => {
    if (!app.external) throw new HomeAgentError('PLUGINS_UNAVAILABLE', 'plugins from outside are not loaded (their approvals store plugin-approvals.json is unusable; see the log)');
    return app.external;
  };
  const nameArg = (args: Record<string, unknown>): string => {
    if (typeof args.name !== 'string' || !args.name) throw new HomeAgentError('BAD_ARGUMENT', 'missing "name" (a plugin\'s name, see homeagent plugins)');
    return args.name;
  };
  // `homeagent plugins install`: preview (what it asks for), then install with or without approval. The CLI sends
  // the plugin as a .tgz (`archive_b64`): the service may not be allowed to read the user's folder (as with listen).
  commands['plugins.preview'] = (args) => withPluginSource(args, (p) => ext().preview(p));
  commands['plugins.install'] = (args) => withPluginSource(args, (p) => ext().install(p, args.approve === true));
  commands['plugins.approve'] = (args) => ext().approve(nameArg(args));
  commands['plugins.remove'] = (args) => ext().remove(nameArg(args));
  commands['plugins.enable'] = (args) => ext().setDisabled(nameArg(args), false);
  commands['plugins.disable'] = (args) => ext().setDisabled(nameArg(args), true);
  commands['plugins.restart'] = (args) => ext().restart(nameArg(args));
  commands['plugins.reload'] = () => ext().reload();
  commands.devices = () => (home.registry ? home.registry.views().map((v) => ({ id: v.entity.id, name: v.entity.name, component: v.entity.component, area: v.entity.area, available: v.available, state: v.state })) : []);
  // `homeagent timers` / `lists` (and the WebUI's Health page): what is running and what is on the lists.
  commands.timers = () => {
    const svc = app.timers.service;
    if (!svc) throw new HomeAgentError('TIMERS_UNAVAILABLE', 'the timers plugin is not running');
    return svc.status().map((t) => ({ id: t.id, ...(t.name ? { name: t.name } : {}), state: t.state, duration_s: t.duration_s, remaining_s: t.remaining_s, channel: t.channel }));
  };
  commands.lists = () => {
    const svc = app.lists.service;
    if (!svc) throw new HomeAgentError('LISTS_UNAVAILABLE', 'the lists plugin is not running');
    return Object.fromEntries(LIST_NAMES.map((l) => [l, svc.items(l).map((i) => ({ id: i.id, text: i.text, created_at: i.created_at }))]));
  };
  commands['memory.stats'] = () => app.memory?.stats() ?? { error: 'memory not running' };
  commands['memory.recall'] = async (args) => app.memory?.recall(String(args.query ?? '')) ?? [];
  // `homeagent memory export --person NAME`: everything stored about a person, as JSON.
  commands['memory.export'] = (args) => {
    if (typeof args.person !== 'string' || args.person.trim() === '') throw new HomeAgentError('BAD_ARGUMENT', 'missing "person" (the name of a person of the household)');
    if (!app.memory) throw new HomeAgentError('MEMORY_UNAVAILABLE', 'the memory system is not running');
    return app.memory.exportPerson(args.person);
  };
  // The broker the box really uses: with none configured, the embedded one, at its port (a newcomer's doctor said only
  // "the embedded broker on 127.0.0.1", with the port 0 = any free one).
  commands.doctor = async () => {
    const input = doctorInputFromSettings(app.settings, app.dataDir);
    return runDoctor({ ...input, ...(input.brokerUrl ? {} : { brokerUrl: app.brokerUrl }), service: { running: true, socket: app.socketPath }, disk: app.disk.status() });
  };
  // The voice plugin serves `listen` itself while it runs (PluginSDK.registerCommand); this answers otherwise.
  commands.listen = () => {
    throw new Error('the voice pipeline is not running');
  };
}

/**
 * The restart_pending of `homeagent status`: the settings read only at start
 * and changed since the service started (`pending`, ConfigRegistry
 * restartPending), less those only their plugin reads at its own start
 * (src/config/plugin-restart.ts) when that plugin has started since the change
 * (`plugins`' started_at, epoch ms like changed_at): `homeagent plugins
 * restart voice` applies plugin.voice.wake_words. A tester's status still
 * said "restart needed" after such a plugin restart. plugin.mqtt.* stay:
 * the service itself reads plugin.mqtt.url at start (the embedded broker).
 */
export function pendingRestarts<T extends { key: string; changed_at: number }>(pending: T[], plugins: readonly PluginStatus[]): T[] {
  return pending.filter((p) => {
    const owner = pluginApplying(p.key);
    const started = owner ? plugins.find((x) => x.name === owner && x.state === 'running')?.started_at : undefined;
    return started === undefined || started < p.changed_at;
  });
}

/** The plugins part of `homeagent status`: state (disabled shown as such), restarts, error, last error, next restart (epoch ms). */
export function statusPlugins(list: PluginStatus[]): Array<{ name: string; state: string; restarts: number; error?: string; last_error?: string; next_restart_at?: number }> {
  return list.map((s) => ({
    name: s.name,
    state: s.disabled ? 'disabled' : s.state,
    restarts: s.restarts,
    ...(s.error ? { error: s.error } : {}),
    ...(s.last_error ? { last_error: s.last_error } : {}),
    ...(s.next_restart_at ? { next_restart_at: s.next_restart_at } : {}),
  }));
}

/**
 * The plugin a `plugins.preview` / `plugins.install` request carries:
 * `archive_b64` (a .tgz, what the CLI sends), written to a temporary file
 * for `fn` and removed after; or `path` (an absolute path the service can
 * read: a folder or .tgz). Throws BAD_ARGUMENT when neither is given.
 */
export async function withPluginSource<T>(args: Record<string, unknown>, fn: (source: string) => T | Promise<T>): Promise<T> {
  if (typeof args.archive_b64 === 'string' && args.archive_b64) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-upload-'));
    try {
      const file = path.join(dir, 'plugin.tgz');
      writeFileSync(file, Buffer.from(args.archive_b64, 'base64'), { mode: 0o600 });
      return await fn(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (typeof args.path === 'string' && path.isAbsolute(args.path)) return fn(args.path);
  throw new HomeAgentError('BAD_ARGUMENT', 'missing "archive_b64" (the plugin as a .tgz, base64) or "path" (an absolute path the service can read)');
}

/** One row of `homeagent plugins`: built-in plugins and plugins from outside. */
export interface PluginRow {
  name: string;
  kind: string;
  version?: string;
  state: string;
  restarts: number;
  error?: string;
  last_error?: string;
  next_restart_at?: number;
  started_at?: number;
  tools: string[];
  channels?: string[];
  capabilities?: string[];
  missing?: string[];
  sandbox?: 'enforced' | 'advisory';
  message?: string;
}

/** `homeagent plugins`: every plugin, built-in first (host order), then those from outside by name. */
export function pluginRows(app: Pick<App, 'kernel' | 'external'>): PluginRow[] {
  const external = new Map((app.external?.list() ?? []).map((p) => [p.name, p]));
  const rows: PluginRow[] = [];
  const fromHost = (s: PluginStatus, e?: ExternalPluginInfo): PluginRow => ({
    name: s.name,
    kind: e?.kind ?? 'built-in',
    ...(e?.version ? { version: e.version } : {}),
    state: e && e.state === 'held' ? 'held' : s.disabled ? 'disabled' : s.state,
    restarts: s.restarts,
    ...(s.error ? { error: s.error } : {}),
    ...(s.last_error ? { last_error: s.last_error } : {}),
    ...(s.next_restart_at ? { next_restart_at: s.next_restart_at } : {}),
    ...(s.started_at ? { started_at: s.started_at } : {}),
    tools: s.tools,
    channels: s.channels,
    ...(e ? { capabilities: e.capabilities, missing: e.missing } : {}),
    ...(e?.sandbox ? { sandbox: e.sandbox } : {}),
    ...(e?.message ? { message: e.message } : {}),
  });
  for (const s of app.kernel.host.status()) {
    rows.push(fromHost(s, external.get(s.name)));
    external.delete(s.name);
  }
  for (const e of external.values()) {
    rows.push({ name: e.name, kind: e.kind ?? '?', ...(e.version ? { version: e.version } : {}), state: e.state, restarts: 0, tools: [], capabilities: e.capabilities, missing: e.missing, ...(e.sandbox ? { sandbox: e.sandbox } : {}), ...(e.message ? { message: e.message } : {}) });
  }
  return rows;
}

/**
 * Devices for plugins (restricted-sdk.ts DeviceAccess): the home's registry,
 * and control through before_toolcall (risky devices ask the household;
 * unanswered is a denial) and the `device_control` tool's own checks.
 */
export function deviceAccess(app: App): DeviceAccess | undefined {
  const reg = app.home.registry;
  if (!reg) return undefined;
  const s = app.kernel.services;
  return {
    list: () => reg.views().map((v) => ({ id: v.entity.id, name: v.entity.name, component: v.entity.component, ...(v.entity.area ? { area: v.entity.area } : {}), available: v.available, state: v.state })),
    control: async (plugin, args) => {
      const input = { id: randomUUID(), source: plugin, channel: '_plugin_', text: `plugin ${plugin}: device_control`, kind: 'queued' as const, level: 0 as const, received_at: s.clock.now() };
      const call = { id: `plugin-${input.id}`, type: 'function' as const, function: { name: 'device_control', arguments: { ...args } as Record<string, unknown> } };
      const ctx = newStageContext('before_toolcall', input, { tool_call: call });
      await s.stages.run(ctx);
      if (ctx.deny) throw new HomeAgentError('DEVICE_DENIED', `device_control for plugin ${plugin} was denied: ${ctx.deny_reason ?? 'no reason given'}`);
      const r = await s.tools.execute('device_control', ctx.tool_call?.function.arguments ?? call.function.arguments, { input, signal: new AbortController().signal, call_id: call.id });
      if (r.is_error) throw new HomeAgentError('DEVICE_CONTROL', r.content.replace(/^error: /, ''));
      return r.content;
    },
  };
}

/** Whether process plugins run sandboxed here (for `doctor`). */
export function pluginSandboxNote(): string {
  const p = sandboxAvailable();
  return p.available ? 'process plugins run sandboxed (bubblewrap)' : `process plugins are NOT sandboxed: their capabilities are advisory (${p.reason})`;
}

/** Journal logging with syslog priorities when stderr is the journal (systemd). */
function setupJournalLogging(env: NodeJS.ProcessEnv): void {
  // logTo keeps the hooks that feed `status` (last errors) and `homeagent logs` (warnings and errors).
  if (isJournalStream(2, env)) logTo(journalDestination(2));
}

/**
 * Run a graceful `stop` and then `exit(0)`; `exit(1)` when it fails or takes
 * longer than `deadlineMs` (a hung plugin), so the service always ends within
 * its stop timeout on its own terms (systemd's TimeoutStopSec would SIGKILL it).
 * The deadline runs on `clock` (tests: FakeClock); it holds the process open.
 */
export function stopWithin(stop: () => Promise<void>, deadlineMs: number, exit: (code: number) => void, log: Logger, clock: Clock = systemClock): void {
  const timer = clock.setTimeout(
    () => {
      log.error({ deadline_ms: deadlineMs }, `graceful stop took longer than ${deadlineMs} ms; exiting now`);
      exit(1);
    },
    deadlineMs,
    { keepAlive: true },
  );
  stop().then(
    () => {
      clock.clearTimeout(timer);
      exit(0);
    },
    (err: unknown) => {
      clock.clearTimeout(timer);
      log.error({ err: errorMessage(err) }, 'graceful stop failed');
      exit(1);
    },
  );
}

/** Run until a signal; used by `homeagent run`. */
export async function runService(opts: AppOptions): Promise<void> {
  setupJournalLogging(opts.env ?? process.env);
  const log: Logger = createLogger('service');
  // Signals are handled from the first moment: one that arrives while the service starts stops it right
  // after the start (the console is up before startApp returns; systemd may stop a starting unit).
  let app: App | undefined;
  let signalled: string | undefined;
  const shutdown = (sig: string) => {
    if (signalled) return;
    signalled = sig;
    log.info({ signal: sig }, 'signal received');
    if (app) {
      const running = app;
      stopWithin(() => running.stop(), running.settings.get<number>('core.service.stop_deadline_ms'), (code) => process.exit(code), log);
    }
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  try {
    app = await startApp(opts);
  } catch (err) {
    // Said once, as text (stderr is the journal under systemd): a typed error is a condition a person can fix,
    // said plainly; anything else is followed by its stack.
    const stack = !(err instanceof HomeAgentError) && err instanceof Error && err.stack ? `${err.stack}\n` : '';
    process.stderr.write(`homeagent: could not start: ${errorMessage(err)}\n${stack}`);
    process.exitCode = 1;
    return;
  }
  if (signalled) {
    const sig = signalled;
    signalled = undefined;
    shutdown(sig);
  }
  process.on('uncaughtException', (err) => log.error({ err: errorMessage(err), stack: err.stack }, 'uncaught exception (service continues)'));
  process.on('unhandledRejection', (err) => log.error({ err: errorMessage(err) }, 'unhandled rejection (service continues)'));
}
