/**
 * Test doubles for the real GPIO driver: a fake sysfs tree (gpiochip*\/base,
 * label, ngpio + class/gpio/export) and a fake kernel behind an onoff-shaped
 * Gpio class (export bookkeeping, EBUSY/EINVAL like the kernel, edge watchers).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OnoffGpio, OnoffGpioCtor } from '../../hal/gpio/onoff-driver.js';

/** Write a fake /sys tree under `root`. */
export function makeFakeSysfs(root: string, chips: Array<{ name: string; base: number; label?: string; ngpio: number }>): void {
  const dir = path.join(root, 'class', 'gpio');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'export'), '');
  for (const c of chips) {
    mkdirSync(path.join(dir, c.name), { recursive: true });
    writeFileSync(path.join(dir, c.name, 'base'), `${c.base}\n`);
    writeFileSync(path.join(dir, c.name, 'ngpio'), `${c.ngpio}\n`);
    if (c.label !== undefined) writeFileSync(path.join(dir, c.name, 'label'), `${c.label}\n`);
  }
}

function errno(code: string): Error {
  return Object.assign(new Error(`${code}: write /sys/class/gpio/export`), { code });
}

interface Line {
  physical: 0 | 1;
  activeLow: boolean;
  watchers: Array<(err: Error | null | undefined, v: 0 | 1) => void>;
}

/** A fake kernel GPIO: lines exported through `ctor()`; `busy` numbers fail with EBUSY; `valid` bounds EINVAL. */
export class FakeKernelGpio {
  readonly exported = new Map<number, Line>();
  readonly exportCalls: number[] = [];

  constructor(private readonly busy = new Set<number>(), private readonly valid = (n: number) => n >= 512 && n < 512 + 58) {}

  /** An onoff-shaped Gpio constructor bound to this fake kernel. */
  ctor(): OnoffGpioCtor {
    const kernel = this;
    return class implements OnoffGpio {
      private readonly line: Line;
      constructor(private readonly n: number, direction: 'in' | 'out' | 'high' | 'low', _edge?: string, opts?: { activeLow?: boolean }) {
        kernel.exportCalls.push(n);
        if (!kernel.valid(n)) throw errno('EINVAL');
        if (kernel.busy.has(n)) throw errno('EBUSY');
        const existing = kernel.exported.get(n);
        const physical = direction === 'high' ? 1 : direction === 'low' ? 0 : (existing?.physical ?? 0);
        this.line = { physical, activeLow: opts?.activeLow ?? false, watchers: [] };
        kernel.exported.set(n, this.line);
      }
      readSync(): 0 | 1 {
        return (this.line.physical ^ (this.line.activeLow ? 1 : 0)) as 0 | 1;
      }
      writeSync(value: 0 | 1): void {
        this.line.physical = (value ^ (this.line.activeLow ? 1 : 0)) as 0 | 1;
      }
      watch(cb: (err: Error | null | undefined, v: 0 | 1) => void): void {
        this.line.watchers.push(cb);
      }
      unwatchAll(): void {
        this.line.watchers = [];
      }
      unexport(): void {
        kernel.exported.delete(this.n);
      }
    };
  }

  /** Drive an exported input line to a logical level; watchers fire on change (asynchronously, like epoll). */
  async drive(n: number, logical: 0 | 1): Promise<void> {
    const line = this.exported.get(n);
    if (!line) throw new Error(`fake kernel: GPIO ${n} is not exported`);
    const physical = (logical ^ (line.activeLow ? 1 : 0)) as 0 | 1;
    if (line.physical === physical) return;
    line.physical = physical;
    await new Promise<void>((r) => setImmediate(r));
    for (const w of [...line.watchers]) w(null, logical);
  }
}
