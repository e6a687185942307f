/**
 * Runs the GPIO contract against the simulator, against the onoff driver on a
 * fake kernel (an in-memory onoff Gpio class over a fake sysfs tree), and, with
 * HOMEAGENT_HW_TESTS=1 and HOMEAGENT_HW_GPIO_LOOPBACK="OUT:IN" (two BCM pins
 * wired together), against onoff on a real Raspberry Pi.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OnoffGpioDriver } from '../../hal/gpio/onoff-driver.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';
import type { GpioOutput } from '../../hal/gpio/types.js';
import { gpioContract } from './contracts/gpio.js';
import { FakeKernelGpio, makeFakeSysfs } from './gpio-fakes.js';

gpioContract('SimGpioDriver', async () => {
  const driver = new SimGpioDriver();
  return {
    driver,
    inputPin: 27,
    outputPin: 22,
    stimulate: async (level) => driver.setLevel(27, level),
    cleanup: async () => {},
  };
});

gpioContract('OnoffGpioDriver on a fake kernel (Pi 4 numbering)', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ha-sysfs-'));
  makeFakeSysfs(root, [{ name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711', ngpio: 58 }]);
  const kernel = new FakeKernelGpio(new Set([512 + 2, 512 + 3])); // I2C pins held by a driver
  const driver = new OnoffGpioDriver({ sysfsRoot: root, Gpio: kernel.ctor() });
  return {
    driver,
    inputPin: 27,
    outputPin: 22,
    stimulate: async (level) => kernel.drive(512 + 27, level),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
});

const loopback = process.env.HOMEAGENT_HW_GPIO_LOOPBACK ?? '';
const hw = process.env.HOMEAGENT_HW_TESTS === '1';
if (hw && /^\d+:\d+$/.test(loopback)) {
  const [outPin, inPin] = loopback.split(':').map(Number) as [number, number];
  gpioContract(`OnoffGpioDriver on this Raspberry Pi (loopback BCM ${outPin} -> BCM ${inPin})`, async () => {
    const driver = new OnoffGpioDriver();
    const stimDriver = new OnoffGpioDriver();
    let stim: GpioOutput | undefined;
    return {
      driver,
      inputPin: inPin,
      outputPin: outPin,
      stimulate: async (level) => {
        stim ??= stimDriver.openOutput(outPin);
        stim.write(level);
        await new Promise((r) => setTimeout(r, 20));
      },
      cleanup: async () => stimDriver.close(),
    };
  });
}
// Otherwise the real-hardware run is not registered: it needs a Raspberry Pi with two header pins wired together.
