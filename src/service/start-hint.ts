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
 * `sudo systemctl start homeagent`, which has no unit there. `socket`: a
 * socket the client was told to use, named in the command. `unitFiles` for
 * tests.
 */
export function startServiceHint(dataDir?: string, unitFiles: readonly string[] = UNIT_FILES, socket?: string): string {
  if (unitFiles.some((f) => existsSync(f))) return 'sudo systemctl start homeagent; if it does not stay up, journalctl -u homeagent -e says why';
  // The socket named, when it is not the data directory's own: the service started so answers where the client looks
  // (a tester's --socket /tmp/x.sock was told to start one on the default socket). Paths quoted for the shell.
  const where = `${dataDir ? ` --data-dir ${shellQuote(dataDir)}` : ''}${socket ? ` --socket ${shellQuote(socket)}` : ''}`;
  return `start it: ./scripts/run.sh${where} in the checkout, or homeagent${where} run (no systemd unit homeagent.service is installed here)`;
}

/** `s` as one shell word: as it is when it holds only safe characters, else in single quotes. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

