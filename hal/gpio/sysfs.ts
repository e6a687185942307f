/**
 * BCM -> sysfs GPIO number. Since kernel 6.6 (Raspberry Pi OS Bookworm) the
 * sysfs numbers are offset: the header chip's base is 512 on a Pi 4, and a Pi 5
 * has several chips with the 40-pin header on the one labelled `pinctrl-rp1`
 * (e.g. base 571). So we read every /sys/class/gpio/gpiochip*\/{base,label,ngpio}
 * and never hard-code a base. The sysfs root is injectable for tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GpioExportError } from './types.js';

/** One gpiochip as sysfs shows it. `base` + BCM = sysfs number; `ngpio` lines. */
export interface GpioChipInfo {
  name: string;
  base: number;
  label: string;
  ngpio: number;
}

/** Labels of the chip that drives the 40-pin header, most specific first (Pi 5, Pi 4, Pi 0-3). */
export const HEADER_CHIP_LABELS = ['pinctrl-rp1', 'pinctrl-bcm2712', 'pinctrl-bcm2711', 'pinctrl-bcm2835'] as const;

/** List the gpiochips under `<sysfsRoot>/class/gpio` (empty when the directory is missing). */
export function listGpioChips(sysfsRoot = '/sys'): GpioChipInfo[] {
  const dir = path.join(sysfsRoot, 'class', 'gpio');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^gpiochip\d+$/.test(n));
  } catch {
    return [];
  }
  const chips: GpioChipInfo[] = [];
  for (const name of names) {
    try {
      const read = (f: string) => readFileSync(path.join(dir, name, f), 'utf8').trim();
      const base = Number.parseInt(read('base'), 10);
      const ngpio = Number.parseInt(read('ngpio'), 10);
      let label = '';
      try {
        label = read('label');
      } catch {
        /* label is optional in fake trees */
      }
      if (Number.isFinite(base)) chips.push({ name, base, label, ngpio: Number.isFinite(ngpio) ? ngpio : 0 });
    } catch {
      /* unreadable chip: skip */
    }
  }
  return chips.sort((a, b) => a.base - b.base);
}

/**
 * Pick the header chip: a known label first (HEADER_CHIP_LABELS, or `preferLabel`
 * when given), else the only chip, else the lowest-base chip with at least 28 lines.
 */
export function findHeaderChip(chips: readonly GpioChipInfo[], preferLabel?: string): GpioChipInfo | undefined {
  const labels = preferLabel ? [preferLabel, ...HEADER_CHIP_LABELS] : HEADER_CHIP_LABELS;
  for (const l of labels) {
    const c = chips.find((x) => x.label === l);
    if (c) return c;
  }
  if (chips.length === 1) return chips[0];
  return chips.find((c) => c.ngpio >= 28);
}

/** Options of `resolveSysfsGpio`: sysfs root (default '/sys') and an optional chip label override. */
export interface ResolveOptions {
  sysfsRoot?: string;
  chipLabel?: string;
}

/**
 * The sysfs GPIO number of BCM pin `bcm` (= header chip base + bcm).
 * Throws `GpioExportError` with errno ENOENT when no gpiochip is found, and
 * EINVAL when `bcm` is negative or not below the chip's `ngpio`.
 */
export function resolveSysfsGpio(bcm: number, opts: ResolveOptions = {}): number {
  const root = opts.sysfsRoot ?? '/sys';
  if (!Number.isInteger(bcm) || bcm < 0) throw new GpioExportError(bcm, undefined, 'EINVAL', { detail: 'a BCM pin number is an integer from 0 to 27 on the 40-pin header' });
  const chips = listGpioChips(root);
  if (chips.length === 0) throw new GpioExportError(bcm, undefined, 'ENOENT', { detail: `no gpiochip under ${path.join(root, 'class', 'gpio')}: this kernel has no sysfs GPIO or this is not a Raspberry Pi` });
  const chip = findHeaderChip(chips, opts.chipLabel);
  if (!chip) {
    const seen = chips.map((c) => `${c.name} "${c.label}" base ${c.base}`).join(', ');
    throw new GpioExportError(bcm, undefined, 'EINVAL', { detail: `cannot tell which gpiochip drives the header among ${seen}; set plugin.gpio.chip_label` });
  }
  if (chip.ngpio > 0 && bcm >= chip.ngpio) {
    throw new GpioExportError(bcm, undefined, 'EINVAL', { detail: `${chip.label || chip.name} has ${chip.ngpio} lines, BCM ${bcm} is out of range` });
  }
  return chip.base + bcm;
}
