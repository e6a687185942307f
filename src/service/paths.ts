/**
 * Where the service keeps its data: `--data-dir`, else HOMEAGENT_DATA_DIR,
 * else systemd's $STATE_DIRECTORY, else /var/lib/homeagent when installed
 * under /opt/homeagent (the device), else ./data-local (development).
 */
import path from 'node:path';
import { INSTALL_ROOT } from '../kernel/kernel.js';

/** Resolve the data directory (absolute). */
export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return path.resolve(flag);
  if (env.HOMEAGENT_DATA_DIR) return path.resolve(env.HOMEAGENT_DATA_DIR);
  if (env.STATE_DIRECTORY) return path.resolve(env.STATE_DIRECTORY.split(':')[0]!);
  if (INSTALL_ROOT.startsWith('/opt/homeagent')) return '/var/lib/homeagent';
  return path.resolve('data-local');
}
