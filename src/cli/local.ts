/**
 * `homeagent config` and `homeagent doctor` without the service: a box that
 * will not start can still be diagnosed and fixed. settings.db is opened
 * directly (the ConfigRegistry: SQLite WAL, synchronous=FULL, a 5 s busy
 * timeout, so a service starting at the same moment and this process wait for
 * each other's writes instead of failing or corrupting), every built-in
 * setting is registered (registerAllSettings) so values are validated exactly
 * as the service would, and environment overrides apply as they would to the
 * service started from this shell. Results have the shapes the service's
 * commands return (src/plugins/control/index.ts).
 */
import { chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigRegistry, envNameFor } from '../config/registry.js';
import { HomeAgentError, errorMessage } from '../kernel/errors.js';
import { optionalPluginHint, registerAllSettings } from '../service/settings.js';
import { doctorInputFromSettings, runDoctor, startServiceHint, type DoctorCheck } from '../service/doctor.js';

/** settings.db could not be opened (permissions, a damaged or newer file). Code SETTINGS_UNAVAILABLE. */
export class LocalSettingsError extends HomeAgentError {
  constructor(file: string, cause: string) {
    super('SETTINGS_UNAVAILABLE', `cannot open ${file} (${cause})${/EACCES|EPERM|readonly/i.test(cause) ? '; run it as the service user: sudo -u homeagent homeagent ... (or with sudo)' : ''}`);
  }
}

/** The settings file of data directory `dataDir`. */
export function settingsFile(dataDir: string): string {
  return path.join(dataDir, 'settings.db');
}

/**
 * Open the settings of `dataDir` with every built-in definition registered.
 * `write`: create the directory and file when absent; otherwise a missing file
 * reads as all defaults (nothing is created). Throws LocalSettingsError.
 */
export function openLocalSettings(dataDir: string, write: boolean, env: NodeJS.ProcessEnv = process.env): ConfigRegistry {
  const file = settingsFile(dataDir);
  let reg: ConfigRegistry;
  try {
    if (!write && !existsSync(file)) reg = new ConfigRegistry(':memory:', { env });
    else {
      if (write) mkdirSync(dataDir, { recursive: true });
      reg = new ConfigRegistry(file, { env, dataDir });
    }
  } catch (err) {
    throw new LocalSettingsError(file, errorMessage(err));
  }
  try {
    // As the service: an optional plugin's keys exist once core.plugins.optional lists it (a newcomer's `config get
    // plugin.camera.name` was unknown with the service running and "camera" with it stopped).
    registerAllSettings(reg, { optional: 'listed' });
    reg.explainUnknown((key) => optionalPluginHint(key, undefined, reg.get<unknown>('core.plugins.optional')));
  } catch (err) {
    reg.close();
    throw err;
  }
  return reg;
}

/**
 * When root wrote settings.db (sudo homeagent config set ...), give the files
 * back to the data directory's owner, so the service user can still open them.
 */
function keepOwner(dataDir: string): void {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  let uid: number;
  let gid: number;
  try {
    ({ uid, gid } = statSync(dataDir));
  } catch {
    return;
  }
  if (uid === 0) return;
  for (const f of ['settings.db', 'settings.db-wal', 'settings.db-shm']) {
    try {
      chownSync(path.join(dataDir, f), uid, gid);
    } catch {
      /* absent */
    }
  }
}

/** What `config get/set` returns for `key`: the value (secrets masked) and a note when the environment overrides it. */
function describe(s: ConfigRegistry, key: string): { key: string; value: unknown; source?: 'env'; note?: string } {
  const row = s.list(key).find((r) => r.key === key);
  const value = row?.type === 'secret' ? (s.get<string>(key) ? '********' : '') : s.get(key);
  return { key, value, ...(row?.source === 'env' ? { source: 'env', note: `overridden by the environment variable ${envNameFor(key)}; the stored value applies only without it` } : {}) };
}

/** The note on a set made while the service is down. */
export const OFFLINE_NOTE = 'the service is not running: settings.db was changed directly; the service uses the new value when it starts';

/**
 * Run `config.get|set|list|delete` on settings.db of `dataDir` (args as the
 * service's commands take them: key, raw, prefix). Throws ConfigError for a
 * bad key or value, LocalSettingsError when the file cannot be opened.
 */
export function localConfig(dataDir: string, cmd: string, args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): unknown {
  const write = cmd === 'config.set' || cmd === 'config.delete';
  // A mistyped --data-dir made a new settings.db silently (a newcomer's): say so when this set creates one.
  const created = write && !existsSync(path.join(dataDir, 'settings.db')) ? `${path.join(dataDir, 'settings.db')} did not exist and was created (is --data-dir right?)` : undefined;
  const offlineNote = [OFFLINE_NOTE, created].filter(Boolean).join('; ');
  const s = openLocalSettings(dataDir, write, env);
  try {
    switch (cmd) {
      case 'config.get':
        return describe(s, String(args.key));
      case 'config.list':
        return s.list(typeof args.prefix === 'string' ? args.prefix : '');
      case 'config.set': {
        const key = String(args.key);
        s.setFromString(key, String(args.raw));
        const d = describe(s, key);
        return { ...d, note: [d.note, offlineNote].filter(Boolean).join('; ') };
      }
      case 'config.delete': {
        const key = String(args.key);
        const removed = s.delete(key);
        const d = describe(s, key);
        const source = s.list(key).find((r) => r.key === key)?.source;
        return { deleted: key, removed, value: d.value, ...(source ? { source } : {}), note: [d.note, offlineNote].filter(Boolean).join('; ') };
      }
      default:
        throw new HomeAgentError('UNKNOWN_COMMAND', `${cmd} is not a settings command`);
    }
  } finally {
    s.close();
    if (write) keepOwner(dataDir);
  }
}

/**
 * `doctor` without the service: the checks the service would run, from
 * settings.db, with a first check saying that the service is not running.
 */
export async function localDoctor(dataDir: string, socketPath: string, env: NodeJS.ProcessEnv = process.env): Promise<{ ok: boolean; checks: DoctorCheck[] }> {
  let s: ConfigRegistry;
  try {
    s = openLocalSettings(dataDir, false, env);
  } catch (err) {
    const checks: DoctorCheck[] = [
      { name: 'service', ok: false, detail: `not running (nothing answers on ${socketPath})`, fix: startServiceHint(dataDir) },
      { name: 'settings', ok: false, detail: errorMessage(err), fix: `check ${settingsFile(dataDir)}: homeagent doctor and the service both need to open it` },
    ];
    return { ok: false, checks };
  }
  try {
    const input = doctorInputFromSettings(s, dataDir);
    const result = await runDoctor({ ...input, service: { running: false, socket: socketPath, dataDir }, ...(env.PATH !== undefined ? { pathEnv: env.PATH } : {}) });
    // With no broker configured the service runs its own, embedded one; with the service down nothing runs yet.
    if (!input.brokerUrl) {
      for (const c of result.checks) if (c.name === 'mqtt broker' && c.ok) c.detail = 'no broker configured: the service starts its embedded broker on 127.0.0.1 when it runs (it is not running now)';
    }
    return result;
  } finally {
    s.close();
  }
}
