/**
 * Whether process plugins can be sandboxed on this machine, as the plugin
 * listing and the loader ask it (issue 17 "A real boundary"). The answer is
 * the process-plugin runtime's own probe (sandbox.ts probeSandbox: bwrap
 * installed and able to create a sandbox like a plugin's); where it cannot,
 * capabilities are advisory and `plugins`, `install` and `doctor` say so.
 */
import { probeSandbox } from './sandbox.js';

/** The probe's answer. `reason` says why not (or which bwrap) for people. */
export interface SandboxProbe {
  available: boolean;
  reason: string;
}

/** Probe once (cached for the process; `fresh` probes again). Never throws. */
export function sandboxAvailable(fresh = false): SandboxProbe {
  const s = probeSandbox(fresh);
  return s.available ? { available: true, reason: `bubblewrap (${s.bwrap ?? 'bwrap'})` } : { available: false, reason: s.reason ?? 'bubblewrap is not usable here' };
}
