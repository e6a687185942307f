/**
 * Driver selection shared by every kind of device: 'real', 'sim' or 'auto'
 * (real when the hardware is there, else the simulator, and say so in the log).
 * MQTT.js style: swappable parts behind one interface, chosen from config.
 */
import type { Logger } from '../../src/kernel/log-types.js';
import { HalError } from './errors.js';

/** Configured driver mode of one kind of device. */
export type DriverMode = 'auto' | 'real' | 'sim';

/** All valid modes, for settings enums. */
export const DRIVER_MODES: readonly DriverMode[] = ['auto', 'real', 'sim'];

/** Result of a hardware probe: present, or absent with a reason a person can read. */
export type Probe = { present: true; detail?: string } | { present: false; reason: string };

/**
 * Decide which driver to use.
 * - 'real' / 'sim': as configured (a missing device then fails in the real driver with its own typed error).
 * - 'auto': probe; real when present, else sim with a warning naming the reason.
 * Throws `HalError` code HAL_BAD_MODE for any other string.
 */
export function chooseDriver(kind: string, mode: string, probe: () => Probe, log: Logger): 'real' | 'sim' {
  if (mode === 'real' || mode === 'sim') {
    log.info({ kind, mode, driver: mode }, `${kind}: using the ${mode === 'real' ? 'real' : 'simulated'} driver (configured)`);
    return mode;
  }
  if (mode !== 'auto') throw new HalError('HAL_BAD_MODE', `${kind}: driver mode "${mode}" is not one of auto, real, sim`);
  const p = probe();
  if (p.present) {
    log.info({ kind, mode, driver: 'real', detail: p.detail }, `${kind}: hardware found, using the real driver`);
    return 'real';
  }
  log.warn({ kind, mode, driver: 'sim', reason: p.reason }, `${kind}: no hardware (${p.reason}), falling back to the simulator`);
  return 'sim';
}
