/**
 * The real GPIO driver: onoff over sysfs (/sys/class/gpio), both edges watched
 * through epoll. BCM pins are resolved to sysfs numbers with `resolveSysfsGpio`.
 * Export failures become `GpioExportError` naming the pin and likely cause.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '../../src/kernel/log-types.js';
import type { Probe } from '../common/mode.js';
import { listGpioChips, resolveSysfsGpio } from './sysfs.js';
import { GpioExportError, toGpioErrno, type GpioDriver, type GpioInput, type GpioOutput, type InputOptions, type Level, type OutputOptions } from './types.js';

/** The subset of onoff's `Gpio` we use (onoff.d.ts). */
export interface OnoffGpio {
  readSync(): 0 | 1;
  writeSync(value: 0 | 1): void;
  watch(cb: (err: Error | null | undefined, value: 0 | 1) => void): void;
  unwatchAll(): void;
  unexport(): void;
}

/** Constructor shape of onoff's `Gpio` (injectable so tests can simulate EINVAL/EBUSY without a Pi). */
export type OnoffGpioCtor = new (
  gpio: number,
  direction: 'in' | 'out' | 'high' | 'low',
  edge?: 'none' | 'rising' | 'falling' | 'both',
  options?: { activeLow?: boolean; reconfigureDirection?: boolean },
) => OnoffGpio;

/** Options of the onoff driver: sysfs root for number resolution (default '/sys'), chip label override, injected Gpio class. */
export interface OnoffDriverOptions {
  sysfsRoot?: string;
  chipLabel?: string;
  Gpio?: OnoffGpioCtor;
  log?: Logger;
}

function loadOnoff(): OnoffGpioCtor {
  const require = createRequire(import.meta.url);
  const mod = require('onoff') as { Gpio: OnoffGpioCtor };
  return mod.Gpio;
}

/** Is sysfs GPIO usable here? Checks `<root>/class/gpio/export` is writable and a gpiochip exists. */
export function probeSysfsGpio(sysfsRoot = '/sys'): Probe {
  const exportPath = path.join(sysfsRoot, 'class', 'gpio', 'export');
  if (!existsSync(exportPath)) return { present: false, reason: `${exportPath} does not exist` };
  try {
    accessSync(exportPath, constants.W_OK);
  } catch {
    return { present: false, reason: `${exportPath} is not writable (is the user in the gpio group?)` };
  }
  const chips = listGpioChips(sysfsRoot);
  if (chips.length === 0) return { present: false, reason: 'no gpiochip found' };
  return { present: true, detail: chips.map((c) => `${c.label || c.name}@${c.base}`).join(', ') };
}

/** GPIO through onoff. Pins opened twice by this driver fail with EBUSY (like two processes would). */
export class OnoffGpioDriver implements GpioDriver {
  readonly kind = 'real' as const;
  private readonly open = new Map<number, { close(): void }>();
  private ctor: OnoffGpioCtor | undefined;

  constructor(private readonly opts: OnoffDriverOptions = {}) {
    this.ctor = opts.Gpio;
  }

  private claim(bcm: number, make: (n: number, Gpio: OnoffGpioCtor) => OnoffGpio): { gpio: OnoffGpio; sysfs: number } {
    if (this.open.has(bcm)) throw new GpioExportError(bcm, undefined, 'EBUSY', { detail: 'this pin is configured twice (two roles share one BCM pin)' });
    const sysfs = resolveSysfsGpio(bcm, { sysfsRoot: this.opts.sysfsRoot, chipLabel: this.opts.chipLabel });
    try {
      this.ctor ??= loadOnoff();
      return { gpio: make(sysfs, this.ctor), sysfs };
    } catch (err) {
      throw new GpioExportError(bcm, sysfs, toGpioErrno(err), { cause: err });
    }
  }

  openInput(bcm: number, opts: InputOptions = {}): GpioInput {
    const { gpio, sysfs } = this.claim(bcm, (n, Gpio) => new Gpio(n, 'in', 'both', { activeLow: opts.activeLow ?? false, reconfigureDirection: true }));
    const listeners = new Set<(l: Level) => void>();
    let closed = false;
    gpio.watch((err, value) => {
      if (err) {
        this.opts.log?.warn({ bcm, sysfs, err: String(err) }, 'gpio watch error');
        return;
      }
      for (const cb of listeners) cb(value);
    });
    const pin: GpioInput = {
      bcm,
      read: () => gpio.readSync(),
      onChange: (cb) => {
        listeners.add(cb);
        return () => listeners.delete(cb);
      },
      close: () => {
        if (closed) return;
        closed = true;
        listeners.clear();
        this.open.delete(bcm);
        try {
          gpio.unwatchAll();
          gpio.unexport();
        } catch (err) {
          this.opts.log?.warn({ bcm, err: String(err) }, 'gpio unexport failed');
        }
      },
    };
    this.open.set(bcm, pin);
    return pin;
  }

  openOutput(bcm: number, opts: OutputOptions = {}): GpioOutput {
    const initial = opts.initial ?? 0;
    const activeLow = opts.activeLow ?? false;
    // 'high'/'low' set the physical level glitch-free at export time.
    const physical = (initial === 1) !== activeLow ? 'high' : 'low';
    const { gpio } = this.claim(bcm, (n, Gpio) => new Gpio(n, physical, undefined, { activeLow, reconfigureDirection: true }));
    let closed = false;
    const pin: GpioOutput = {
      bcm,
      write: (level) => {
        if (!closed) gpio.writeSync(level);
      },
      read: () => gpio.readSync(),
      close: () => {
        if (closed) return;
        closed = true;
        this.open.delete(bcm);
        try {
          gpio.writeSync(0);
          gpio.unexport();
        } catch (err) {
          this.opts.log?.warn({ bcm, err: String(err) }, 'gpio unexport failed');
        }
      },
    };
    this.open.set(bcm, pin);
    return pin;
  }

  close(): void {
    for (const p of [...this.open.values()]) p.close();
  }
}
