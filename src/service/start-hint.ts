/**
 * How to start a service that is not running, as doctor and the command
 * line's "cannot reach" error say it. Kept apart from doctor so the socket
 * client does not load the checks (sqlite, mqtt) to word an error.
 */
import { existsSync } from 'node:fs';

/** Where systemd looks for the service's unit (image/install.sh installs it in the first). */
const UNIT_FILES = ['/etc/systemd/system/homeagent.service', '/lib/systemd/system/homeagent.service', '/usr/lib/systemd/system/homeagent.service'];

/**
 * How to start the service that is not running: with systemd where its unit
 * is installed (a device), else as in a checkout (`./scripts/run.sh`, or
 * `homeagent run`) on `dataDir` when given; a newcomer in a checkout was told
 * `sudo systemctl start homeagent`, which has no unit there. `unitFiles`
 * for tests.
 */
export function startServiceHint(dataDir?: string, unitFiles: readonly string[] = UNIT_FILES): string {
  if (unitFiles.some((f) => existsSync(f))) return 'sudo systemctl start homeagent; if it does not stay up, journalctl -u homeagent -e says why';
  const dir = dataDir ? ` --data-dir ${dataDir}` : '';
  return `start it: ./scripts/run.sh${dir} in the checkout, or homeagent${dir} run (no systemd unit homeagent.service is installed here)`;
}

