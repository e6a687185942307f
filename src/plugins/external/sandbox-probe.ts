/**
 * Whether process plugins can be sandboxed on this machine (issue 17 "A real
 * boundary"): bubblewrap (`bwrap`, Debian's `bubblewrap`) must be installed
 * and able to create its namespaces (a container or `RestrictNamespaces=yes`
 * can forbid that). Where it cannot, capabilities are advisory, and
 * `plugins`, `install` and `doctor` say so. The process plugin runtime owns
 * the sandbox itself; this is the plain probe the listing uses.
 */
import { spawnSync } from 'node:child_process';

/** The probe's answer. `reason` says why not (or which bwrap) for people. */
export interface SandboxProbe {
  available: boolean;
  reason: string;
}

let cached: SandboxProbe | undefined;

/**
 * Run `bwrap --ro-bind / / --unshare-all --die-with-parent true` once (cached
 * for the process; `fresh` probes again). Takes a few ms; never throws.
 */
export function sandboxAvailable(fresh = false): SandboxProbe {
  if (cached && !fresh) return cached;
  const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', 'true'], { encoding: 'utf8', timeout: 5000 });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    cached = { available: false, reason: code === 'ENOENT' ? 'bwrap (Debian package bubblewrap) is not installed' : `bwrap could not run: ${r.error.message}` };
  } else if (r.status !== 0) {
    cached = { available: false, reason: `bwrap cannot create its namespaces here: ${(r.stderr || `exit ${String(r.status)}`).trim().slice(0, 200)}` };
  } else {
    cached = { available: true, reason: 'bubblewrap' };
  }
  return cached;
}
