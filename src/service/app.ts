/**
 * The service (`homeagent run`): opens the settings, builds the kernel and
 * starts the built-in plugins from an explicit list, each in its own guard.
 * Shuts down cleanly on SIGINT/SIGTERM (current reply cut, plugins stopped in
 * reverse order, databases closed).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ConfigRegistry } from '../config/registry.js';
import { Kernel } from '../kernel/kernel.js';
import { createLogger, setLogLevel } from '../kernel/log.js';
import type { Plugin } from '../kernel/types.js';
import { ConsolePlugin } from '../plugins/console/index.js';
import { ControlPlugin, type CommandHandler } from '../plugins/control/index.js';
import { defaultSocketPath } from '../cli/client.js';
import { errorMessage } from '../kernel/errors.js';

/** Options of `homeagent run`. */
export interface AppOptions {
  dataDir: string;
  /** Attach the text console to stdin/stdout (default: when stdin is a TTY). */
  console?: boolean;
  socketPath?: string;
  env?: NodeJS.ProcessEnv;
}

/** A running service. */
export interface App {
  kernel: Kernel;
  settings: ConfigRegistry;
  control: ControlPlugin;
  dataDir: string;
  socketPath: string;
  startedAt: number;
  stop(): Promise<void>;
}

/** Build and start the service. */
export async function startApp(opts: AppOptions): Promise<App> {
  const log = createLogger('service');
  const env = opts.env ?? process.env;
  mkdirSync(opts.dataDir, { recursive: true });
  const settings = new ConfigRegistry(path.join(opts.dataDir, 'settings.db'), { env });
  const kernel = new Kernel({ settings, dataDir: opts.dataDir });
  const socketPath = opts.socketPath ?? defaultSocketPath(opts.dataDir, env);
  const startedAt = Date.now();
  const commands: Record<string, CommandHandler> = {};
  const control = new ControlPlugin({ socketPath, commands });
  let stopping: Promise<void> | undefined;
  const app: App = {
    kernel,
    settings,
    control,
    dataDir: opts.dataDir,
    socketPath,
    startedAt,
    stop() {
      stopping ??= (async () => {
        log.info('shutting down');
        await kernel.stop();
        settings.close();
        log.info('stopped');
      })();
      return stopping;
    },
  };

  const plugins: Plugin[] = [control];
  const useConsole = opts.console ?? !!process.stdin.isTTY;
  if (useConsole && process.stderr.isTTY && !env.HOMEAGENT_LOG_LEVEL) setLogLevel('warn');
  if (useConsole) plugins.push(new ConsolePlugin({ prompt: !!process.stdin.isTTY, onQuit: () => void app.stop().then(() => process.exit(0)) }));
  for (const p of plugins) kernel.use(p);

  commands.status = () => ({
    uptime_s: Math.round((Date.now() - startedAt) / 1000),
    data_dir: opts.dataDir,
    agent: kernel.agent.stats(),
    plugins: kernel.host.status().map((p) => ({ name: p.name, state: p.state, error: p.error })),
  });
  commands.plugins = () => kernel.host.status();

  await kernel.start();
  for (const s of kernel.host.status()) if (s.state === 'failed') log.error({ plugin: s.name, err: s.error }, 'plugin failed to start');
  return app;
}

/** Run until a signal; used by `homeagent run`. */
export async function runService(opts: AppOptions): Promise<void> {
  const log = createLogger('service');
  let app: App;
  try {
    app = await startApp(opts);
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'could not start');
    process.exitCode = 1;
    return;
  }
  const shutdown = (sig: string) => {
    log.info({ signal: sig }, 'signal received');
    void app.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.on('uncaughtException', (err) => log.error({ err: errorMessage(err), stack: err.stack }, 'uncaught exception (service continues)'));
  process.on('unhandledRejection', (err) => log.error({ err: errorMessage(err) }, 'unhandled rejection (service continues)'));
}
