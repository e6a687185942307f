/**
 * SerialPlugin: a JSON-lines serial peripheral. Its readings are published as
 * `plugin.serial.reading` bus events, its commands are the `serial_send`
 * tool, connection changes are `plugin.serial.status`, and (optionally) an LED
 * ring on the device follows `assistant_state` (`{"cmd":"led","state":...}`;
 * a state newer than the first five is sent as the one it looks like, with
 * its own name in `detail`: `{"cmd":"led","state":"listening","detail":"waiting_for_answer"}`).
 * Settings plugin.serial.*; 'sim' uses @serialport/binding-mock.
 */
import { existsSync } from 'node:fs';
import { SerialPort, SerialPortMock } from 'serialport';
import type { Logger } from '../../src/kernel/log-types.js';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef } from '../../src/kernel/settings-types.js';
import { errorMessage } from '../../src/kernel/errors.js';
import type { Clock } from '../../src/kernel/clock.js';
import { legacyAssistantState } from '../../src/kernel/assistant-state.js';
import { chooseDriver, DRIVER_MODES } from '../common/mode.js';
import { SerialDevice, type PortFactory } from './serial-device.js';

/** Settings of the serial plugin. */
export const SERIAL_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.serial.driver', type: 'string', default: 'auto', enum: DRIVER_MODES, description: "Serial driver: 'auto' (real when the device path exists, else the simulator), 'real' (waits for the device to be plugged in), 'sim'" },
  { key: 'plugin.serial.path', type: 'string', default: '/dev/ttyACM0', description: 'Serial device, e.g. /dev/ttyACM0, /dev/ttyUSB0 or /dev/serial/by-id/...' },
  { key: 'plugin.serial.baud_rate', type: 'integer', default: 115200, min: 1200, max: 1000000, description: 'Baud rate, bit/s' },
  { key: 'plugin.serial.reply_timeout_ms', type: 'integer', default: 2000, min: 50, max: 60000, description: 'How long serial_send waits for an answer line with the same id (ms)' },
  { key: 'plugin.serial.led_ring', type: 'boolean', default: false, description: 'The device drives an LED ring: send {"cmd":"led","state":...} on every assistant state change' },
];

/** Port factory for the mock binding: creates the mock port at `path` once (no echo, writes recorded). */
export const mockPortFactory: PortFactory = ({ path, baudRate }) => {
  try {
    SerialPortMock.binding.createPort(path, { echo: false, record: true });
  } catch {
    /* already created */
  }
  return new SerialPortMock({ path, baudRate, autoOpen: false });
};

/** Port factory for real hardware (serialport's native binding). */
export const systemPortFactory: PortFactory = ({ path, baudRate }) => new SerialPort({ path, baudRate, autoOpen: false });

/** Dependencies for tests: a port factory (overrides the driver choice) and a clock. */
export interface SerialPluginDeps {
  createPort?: PortFactory;
  clock?: Clock;
}

/** The serial plugin. */
export class SerialPlugin implements Plugin {
  readonly name = 'serial';
  private device: SerialDevice | undefined;
  private unsubs: Array<() => void> = [];
  private log: Logger | undefined;

  constructor(private readonly deps: SerialPluginDeps = {}) {}

  /** The device, once started (its `currentPort` is a mock port when simulated). */
  get serial(): SerialDevice | undefined {
    return this.device;
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.log = sdk.log;
    const settings = sdk.settings();
    for (const def of SERIAL_SETTINGS) settings.register(def);
    const path = settings.get<string>('plugin.serial.path');
    const baudRate = settings.get<number>('plugin.serial.baud_rate');
    let createPort = this.deps.createPort;
    if (!createPort) {
      const which = chooseDriver('serial', settings.get<string>('plugin.serial.driver'), () => (existsSync(path) ? { present: true, detail: path } : { present: false, reason: `${path} does not exist` }), sdk.log);
      createPort = which === 'real' ? systemPortFactory : mockPortFactory;
    }
    const device = new SerialDevice({ path, baudRate, createPort, clock: this.deps.clock, log: sdk.log });
    this.device = device;
    device.on('reading', (r) => sdk.publish('plugin.serial.reading', r));
    device.on('invalid', (e) => sdk.log.debug({ line: e.line, err: e.error }, 'serial: ignored a line that is not a JSON object'));
    device.on('open', () => sdk.publish('plugin.serial.status', { connected: true, path }));
    device.on('close', (e) => sdk.publish('plugin.serial.status', { connected: false, path, disconnected: e.disconnected }));

    sdk.registerTool({
      name: 'serial_send',
      description: `Send a JSON command to the serial device at ${path} (a microcontroller with sensors or actuators). Set await_reply to wait for its answer.`,
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'object', description: 'The JSON command object, e.g. {"cmd":"relay","on":true}' },
          await_reply: { type: 'boolean', description: 'Wait for the device line with the same id and return it' },
        },
        required: ['command'],
        additionalProperties: false,
      },
      handler: async (args) => {
        const command = args.command;
        if (typeof command !== 'object' || command === null || Array.isArray(command)) throw new Error('command must be a JSON object');
        if (args.await_reply === true) {
          const reply = await device.request(command as Record<string, unknown>, settings.get<number>('plugin.serial.reply_timeout_ms'));
          return { sent: true, reply };
        }
        await device.send(command as Record<string, unknown>);
        return { sent: true };
      },
    });

    this.unsubs.push(
      sdk.subscribe('assistant_state', (e) => {
        if (!settings.get<boolean>('plugin.serial.led_ring') || !device.isOpen) return;
        // Ring firmware written for the first five states keeps working: `state` is one of those, `detail` names a newer one.
        const legacy = legacyAssistantState(e.state);
        device.send({ cmd: 'led', state: legacy, ...(legacy !== e.state ? { detail: e.state } : {}) }).catch((err: unknown) => this.log?.debug({ err: errorMessage(err) }, 'serial: led update failed'));
      }),
    );
    await device.start();
  }

  async stop(): Promise<void> {
    for (const u of this.unsubs) u();
    this.unsubs = [];
    await this.device?.stop();
    this.device = undefined;
  }
}
