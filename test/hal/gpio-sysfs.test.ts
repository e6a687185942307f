/**
 * BCM -> sysfs GPIO numbering from a fake sysfs tree (issue 6: BCM17 -> 529
 * with one chip at base 512; BCM17 -> 588 when pinctrl-rp1 is at 571 beside
 * another chip at 512), and export errors from the onoff driver.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { OnoffGpioDriver, probeSysfsGpio, type OnoffGpioCtor } from '../../hal/gpio/onoff-driver.js';
import { listGpioChips, resolveSysfsGpio } from '../../hal/gpio/sysfs.js';
import { GpioExportError } from '../../hal/gpio/types.js';
import { FakeKernelGpio, makeFakeSysfs } from './gpio-fakes.js';

const roots: string[] = [];
function tree(chips: Parameters<typeof makeFakeSysfs>[1]): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ha-sysfs-'));
  roots.push(root);
  makeFakeSysfs(root, chips);
  return root;
}
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('resolveSysfsGpio', () => {
  it('Pi 4 on kernel 6.6: one chip at base 512 -> BCM17 is 529', () => {
    const root = tree([{ name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 }]);
    assert.equal(resolveSysfsGpio(17, { sysfsRoot: root }), 529);
  });

  it('a single unlabelled chip is the header chip', () => {
    const root = tree([{ name: 'gpiochip512', base: 512, ngpio: 58 }]);
    assert.equal(resolveSysfsGpio(17, { sysfsRoot: root }), 529);
  });

  it('Pi 5: pinctrl-rp1 at 571 beside another chip at 512 -> BCM17 is 588', () => {
    const root = tree([
      { name: 'gpiochip512', base: 512, label: 'gpio-brcmstb@107d508500', ngpio: 32 },
      { name: 'gpiochip571', base: 571, label: 'pinctrl-rp1', ngpio: 54 },
    ]);
    assert.equal(resolveSysfsGpio(17, { sysfsRoot: root }), 588);
    assert.deepEqual(
      listGpioChips(root).map((c) => c.base),
      [512, 571],
    );
  });

  it('older kernels: pinctrl-bcm2835 at base 0 -> BCM17 is 17', () => {
    const root = tree([{ name: 'gpiochip0', base: 0, label: 'pinctrl-bcm2835', ngpio: 54 }]);
    assert.equal(resolveSysfsGpio(17, { sysfsRoot: root }), 17);
  });

  it('a configured chip label wins', () => {
    const root = tree([
      { name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 },
      { name: 'gpiochip570', base: 570, label: 'my-expander', ngpio: 16 },
    ]);
    assert.equal(resolveSysfsGpio(3, { sysfsRoot: root, chipLabel: 'my-expander' }), 573);
  });

  it('no sysfs GPIO -> GpioExportError ENOENT; out of range -> EINVAL', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'ha-sysfs-'));
    roots.push(empty);
    assert.throws(() => resolveSysfsGpio(17, { sysfsRoot: empty }), (e: unknown) => e instanceof GpioExportError && e.errno === 'ENOENT' && e.message.includes('BCM 17'));
    const root = tree([{ name: 'gpiochip571', base: 571, label: 'pinctrl-rp1', ngpio: 54 }]);
    assert.throws(() => resolveSysfsGpio(60, { sysfsRoot: root }), (e: unknown) => e instanceof GpioExportError && e.errno === 'EINVAL');
    assert.throws(() => resolveSysfsGpio(-1, { sysfsRoot: root }), (e: unknown) => e instanceof GpioExportError && e.errno === 'EINVAL');
  });

  it('probeSysfsGpio reports absence with a reason and presence with the chips', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'ha-sysfs-'));
    roots.push(empty);
    const absent = probeSysfsGpio(empty);
    assert.equal(absent.present, false);
    assert.match(absent.present ? '' : absent.reason, /export does not exist/);
    const root = tree([{ name: 'gpiochip571', base: 571, label: 'pinctrl-rp1', ngpio: 54 }]);
    assert.deepEqual(probeSysfsGpio(root), { present: true, detail: 'pinctrl-rp1@571' });
  });
});

describe('OnoffGpioDriver export errors', () => {
  it('exports the resolved sysfs number (never a hard-coded base)', () => {
    const root = tree([
      { name: 'gpiochip512', base: 512, label: 'gpio-brcmstb@107d508500', ngpio: 32 },
      { name: 'gpiochip571', base: 571, label: 'pinctrl-rp1', ngpio: 54 },
    ]);
    const kernel = new FakeKernelGpio(new Set(), () => true);
    const driver = new OnoffGpioDriver({ sysfsRoot: root, Gpio: kernel.ctor() });
    driver.openInput(17).close();
    assert.deepEqual(kernel.exportCalls, [588]);
  });

  it('EBUSY from the kernel becomes GpioExportError naming the pin and the likely cause', () => {
    const root = tree([{ name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 }]);
    const driver = new OnoffGpioDriver({ sysfsRoot: root, Gpio: new FakeKernelGpio(new Set([514])).ctor() });
    try {
      driver.openInput(2);
      assert.fail('expected GpioExportError');
    } catch (err) {
      assert.ok(err instanceof GpioExportError);
      assert.equal(err.code, 'GPIO_EXPORT');
      assert.equal(err.errno, 'EBUSY');
      assert.equal(err.bcm, 2);
      assert.equal(err.sysfs, 514);
      assert.match(err.message, /BCM 2 \(sysfs GPIO 514\)/);
      assert.match(err.message, /dtoverlay|already claimed/);
    }
  });

  it('EINVAL from the kernel becomes GpioExportError EINVAL', () => {
    const root = tree([{ name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 }]);
    const driver = new OnoffGpioDriver({ sysfsRoot: root, Gpio: new FakeKernelGpio(new Set(), () => false).ctor() });
    assert.throws(() => driver.openOutput(22), (e: unknown) => e instanceof GpioExportError && e.errno === 'EINVAL' && /sysfs base/.test(e.message));
  });

  it('EACCES becomes a hint about the gpio group and the udev rule', () => {
    const root = tree([{ name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 }]);
    const Denied = class {
      constructor() {
        throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
      }
    } as unknown as OnoffGpioCtor;
    const driver = new OnoffGpioDriver({ sysfsRoot: root, Gpio: Denied });
    assert.throws(() => driver.openOutput(22), (e: unknown) => e instanceof GpioExportError && e.errno === 'EACCES' && /gpio group/.test(e.message));
  });
});
