/**
 * The homeagent services running on this machine, found from /proc (Linux):
 * a process whose arguments are the CLI (`.../cli/main.js` or `.ts`, or
 * `homeagent`) with the `run` subcommand. Its socket is worked out as the
 * service itself does (client.ts defaultSocketPath, paths.ts
 * resolveDataDir) from its `--socket`/`--data-dir` options, its environment
 * (HOMEAGENT_SOCKET, HOMEAGENT_DATA_DIR, RUNTIME_DIRECTORY, STATE_DIRECTORY;
 * readable for the same user or root) and its working directory.
 *
 * For the clients' hint when nothing answers on the socket they tried: a
 * newcomer who started `./scripts/run.sh --data-dir /tmp/x` and then typed
 * `homeagent status` was told only that nothing ran ("Is it running?"), and
 * `homeagent config set` then changed another data directory's settings.db.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { defaultSocketPath } from './client.js';
import { resolveDataDir } from '../service/paths.js';

/** A running service: its process id and the socket it listens on (which exists). */
export interface RunningService {
  pid: number;
  socket: string;
  /** Its data directory. */
  dataDir: string;
}

/** The value of option `name` in `args` ("--name value" or "--name=value"), if given. */
function option(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i]!.startsWith(`${name}=`)) return args[i]!.slice(name.length + 1);
  }
  return undefined;
}

/** The environment of process `pid` (empty when it cannot be read). */
function environ(pid: number): NodeJS.ProcessEnv {
  try {
    const env: NodeJS.ProcessEnv = {};
    for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return env;
  } catch {
    return {};
  }
}

/**
 * The service run by `args` (a process's command line) in `cwd` with `env`,
 * or undefined when the command line is no `homeagent run`.
 */
export function serviceOf(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): { socket: string; dataDir: string } | undefined {
  const cli = args.findIndex((a) => /(^|\/)cli\/main\.(js|ts)$/.test(a) || path.basename(a) === 'homeagent');
  if (cli < 0 || !args.slice(cli + 1).includes('run')) return undefined;
  const rest = args.slice(cli + 1);
  const socket = option(rest, '--socket');
  const flag = option(rest, '--data-dir');
  // resolveDataDir, in the service's working directory.
  const installed = resolveDataDir(undefined, {});
  const dataDir = flag
    ? path.resolve(cwd, flag)
    : env.HOMEAGENT_DATA_DIR
      ? path.resolve(cwd, env.HOMEAGENT_DATA_DIR)
      : env.STATE_DIRECTORY
        ? path.resolve(cwd, env.STATE_DIRECTORY.split(':')[0]!)
        : installed === '/var/lib/homeagent'
          ? installed
          : path.join(cwd, 'data-local');
  return { socket: socket ? path.resolve(cwd, socket) : defaultSocketPath(dataDir, env), dataDir };
}

/** Every running homeagent service whose socket exists, but the one at `except`; empty where /proc cannot be read. */
export function runningServices(except?: string): RunningService[] {
  const out: RunningService[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!args.some((a) => a === 'run')) continue;
      const s = serviceOf(args, readlinkSync(`/proc/${pid}/cwd`), environ(pid));
      if (!s || !existsSync(s.socket) || (except && path.resolve(except) === s.socket)) continue;
      if (!out.some((o) => o.socket === s.socket)) out.push({ pid, ...s });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/** The sentence that points at running services ("A homeagent service runs with its socket at X: add --socket X."), or undefined for none. */
export function otherServicesHint(services: readonly RunningService[]): string | undefined {
  if (services.length === 0) return undefined;
  const how = (s: RunningService): string => (s.socket === path.join(s.dataDir, 'homeagent.sock') ? `--data-dir ${s.dataDir}` : `--socket ${s.socket}`);
  if (services.length === 1) return `a homeagent service runs with its socket at ${services[0]!.socket}: add ${how(services[0]!)}`;
  return `homeagent services run with their sockets at ${services.map((s) => s.socket).join(', ')}: add ${services.map(how).join(' or ')}`;
}

/**
 * The running service on data directory `dataDir` (resolved), if any: one
 * started with its socket elsewhere (--socket) is found by its data
 * directory (a breaking tester's `--data-dir reldata doctor` said the service
 * was not running and told them to start a second one on the same data).
 */
export function serviceOnDataDir(dataDir: string): RunningService | undefined {
  const want = path.resolve(dataDir);
  return runningServices().find((s) => s.dataDir === want);
}
