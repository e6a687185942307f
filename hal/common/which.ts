/**
 * Find an executable on PATH without spawning it (used by 'auto' probes).
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Absolute path of `cmd` on `PATH` (or `cmd` itself when it contains a slash and is executable); undefined when absent. */
export function which(cmd: string, envPath = process.env.PATH ?? ''): string | undefined {
  const candidates = cmd.includes('/') ? [cmd] : envPath.split(path.delimiter).filter(Boolean).map((d) => path.join(d, cmd));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
