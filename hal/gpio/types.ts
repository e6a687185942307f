/**
 * GPIO interface shared by the real (onoff, sysfs) and simulated drivers.
 * Pins are BCM numbers everywhere above the driver; values are logical
 * (after active-low inversion): 1 = pressed / LED on.
 */
import { HalError } from '../common/errors.js';

/** A logical pin level. */
export type Level = 0 | 1;

/** Options of an input pin. `activeLow`: the pin reads 0 V when active (button to GND with pull-up). */
export interface InputOptions {
  activeLow?: boolean;
}

/** Options of an output pin. `initial`: logical level right after opening (default 0). */
export interface OutputOptions {
  activeLow?: boolean;
  initial?: Level;
}

/** An input pin watched on both edges. Raw, undebounced: `Button` debounces. */
export interface GpioInput {
  readonly bcm: number;
  /** Current logical level (synchronous read). */
  read(): Level;
  /** Called on every edge with the new logical level; returns an unsubscribe function. */
  onChange(cb: (level: Level) => void): () => void;
  /** Stop watching and release (unexport) the pin. Idempotent. */
  close(): void;
}

/** An output pin (LED). */
export interface GpioOutput {
  readonly bcm: number;
  write(level: Level): void;
  read(): Level;
  /** Drive the pin low (logical 0) and release it. Idempotent. */
  close(): void;
}

/** A GPIO driver: opens pins by BCM number. `kind` says which implementation it is. */
export interface GpioDriver {
  readonly kind: 'real' | 'sim';
  /** Throws `GpioExportError` when the pin cannot be claimed (EINVAL, EBUSY, EACCES, ENOENT). */
  openInput(bcm: number, opts?: InputOptions): GpioInput;
  /** Throws `GpioExportError` when the pin cannot be claimed. */
  openOutput(bcm: number, opts?: OutputOptions): GpioOutput;
  /** Release every pin this driver opened. */
  close(): void;
}

/** The errno behind a failed export. */
export type GpioErrno = 'EINVAL' | 'EBUSY' | 'EACCES' | 'ENOENT' | 'EIO';

function likelyCause(errno: GpioErrno): string {
  switch (errno) {
    case 'EINVAL':
      return 'the kernel does not know this GPIO number: the BCM pin is out of range for the header chip, or the sysfs base differs from the one resolved (compare /sys/class/gpio/gpiochip*/base and label)';
    case 'EBUSY':
      return 'the pin is already claimed: by a kernel driver from a dtoverlay in /boot/firmware/config.txt (i2c, spi, w1-gpio, gpio-key, a sound HAT), by another process (libgpiod, another homeagent), or twice in the HomeAgent settings';
    case 'EACCES':
      return 'permission denied: the service user must be in the gpio group and systemd/99-homeagent-gpio.rules must be installed in /etc/udev/rules.d';
    case 'ENOENT':
      return '/sys/class/gpio is missing: this kernel has no sysfs GPIO interface (CONFIG_GPIO_SYSFS) or this is not a Raspberry Pi';
    default:
      return 'the kernel refused the export';
  }
}

/**
 * A pin could not be exported/claimed at startup. `code` is always
 * 'GPIO_EXPORT'; `errno` says why (EINVAL, EBUSY, EACCES, ENOENT, EIO); the
 * message names the BCM pin, the sysfs number and the likely cause.
 */
export class GpioExportError extends HalError {
  constructor(
    readonly bcm: number,
    readonly sysfs: number | undefined,
    readonly errno: GpioErrno,
    options?: { cause?: unknown; detail?: string },
  ) {
    const where = sysfs === undefined ? `BCM ${bcm}` : `BCM ${bcm} (sysfs GPIO ${sysfs})`;
    super('GPIO_EXPORT', `cannot claim ${where}: ${errno}: ${options?.detail ?? likelyCause(errno)}`, options);
  }
}

/** Map a thrown fs error code to a `GpioErrno` (EPERM counts as EACCES). */
export function toGpioErrno(err: unknown): GpioErrno {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  if (code === 'EINVAL' || code === 'EBUSY' || code === 'EACCES' || code === 'ENOENT') return code;
  if (code === 'EPERM') return 'EACCES';
  return 'EIO';
}
