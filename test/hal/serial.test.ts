/**
 * Serial: the contract on @serialport/binding-mock, reconnect after an unplug
 * (fake clock for the backoff), config errors, and SerialPlugin with a fake
 * SDK (readings as plugin.serial.reading events, the serial_send tool, LED ring).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { SerialPortMock } from 'serialport';
import { FakeClock } from '../../src/kernel/clock.js';
import { mockPortFactory, SerialPlugin } from '../../hal/serial/plugin.js';
import { SerialDevice, SerialError, type PortFactory } from '../../hal/serial/serial-device.js';
import { serialContract } from './contracts/serial.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { waitUntil } from '../support/wait.js';

let n = 0;
const nextPath = () => `/dev/ttyMOCK${++n}`;

type MockPort = NonNullable<SerialPortMock['port']>;
function binding(device: SerialDevice): MockPort {
  const port = device.currentPort as SerialPortMock | undefined;
  if (!port?.port) throw new Error('port not open');
  return port.port;
}

serialContract('mock binding', async () => {
  const path = nextPath();
  const device = new SerialDevice({ path, baudRate: 115200, createPort: mockPortFactory });
  assert.equal(await device.start(), true);
  return {
    device,
    deviceSays: (raw) => binding(device).emitData(raw),
    received: () => (device.currentPort ? binding(device).recording.toString('utf8') : ''),
    cleanup: async () => {},
  };
});

/** A mock port factory that does not create the port: a missing port stays missing (unplugged). */
const plainMock: PortFactory = ({ path, baudRate }) => new SerialPortMock({ path, baudRate, autoOpen: false });

/** Make the mock's pending read fail the way an unplugged USB serial fails (EIO), after removing the port. */
function unplug(device: SerialDevice): void {
  const b = binding(device) as unknown as { pendingRead: ((err?: Error) => void) | null };
  SerialPortMock.binding.reset();
  assert.ok(b.pendingRead, 'a read is pending');
  b.pendingRead(new Error('EIO: i/o error, device unplugged'));
}

describe('SerialDevice reconnect', () => {
  it('reopens with backoff after the device is unplugged and plugged back in', async () => {
    const clock = new FakeClock();
    const path = nextPath();
    SerialPortMock.binding.createPort(path, { echo: false, record: true });
    const device = new SerialDevice({ path, baudRate: 9600, createPort: plainMock, clock, reconnect: { initialMs: 1000, maxMs: 8000 } });
    await device.start();
    await new Promise((r) => setImmediate(r));
    const attempts: Array<[number, number]> = [];
    device.on('reconnecting', (e) => attempts.push([e.attempt, e.delayMs]));
    const closed = once(device, 'close');
    unplug(device);
    const [info] = (await closed) as [{ disconnected: boolean }];
    assert.equal(info.disconnected, true);
    assert.equal(device.isOpen, false);
    assert.deepEqual(attempts, [[1, 1000]]);
    // Still unplugged: the reopen fails and the delay doubles.
    const second = once(device, 'reconnecting');
    clock.advance(1000);
    await second;
    assert.deepEqual(attempts, [
      [1, 1000],
      [2, 2000],
    ]);
    // Plugged back in.
    SerialPortMock.binding.createPort(path, { echo: false, record: true });
    const opened = once(device, 'open');
    clock.advance(2000);
    await opened;
    assert.equal(device.isOpen, true);
    const reading = once(device, 'reading');
    binding(device).emitData('{"back":true}\n');
    assert.deepEqual((await reading)[0], { back: true });
    await device.stop();
    assert.equal(clock.pending, 0);
  });

  it('a device missing at start keeps retrying instead of failing', async () => {
    const clock = new FakeClock();
    const path = nextPath();
    const device = new SerialDevice({ path, baudRate: 9600, createPort: plainMock, clock });
    const retry = once(device, 'reconnecting');
    assert.equal(await device.start(), false);
    const [e] = (await retry) as [{ attempt: number; error: string }];
    assert.equal(e.attempt, 1);
    assert.match(e.error, /does not exist/);
    await device.stop();
    assert.equal(clock.pending, 0);
  });

  it('a request without an answer times out with SERIAL_TIMEOUT on the clock', async () => {
    const clock = new FakeClock();
    const device = new SerialDevice({ path: nextPath(), baudRate: 9600, createPort: mockPortFactory, clock });
    await device.start();
    const p = device.request({ cmd: 'ping' }, 500);
    await waitUntil(() => binding(device).recording.includes('"ping"'), 'the request to be written');
    clock.advance(500);
    await assert.rejects(p, (err: unknown) => err instanceof SerialError && err.code === 'SERIAL_TIMEOUT');
    await device.stop();
  });

  it('an unusual baud rate or an empty path is a config error', () => {
    assert.throws(() => new SerialDevice({ path: '/dev/x', baudRate: 12345, createPort: mockPortFactory }), (e: unknown) => e instanceof SerialError && e.code === 'SERIAL_BAD_CONFIG');
    assert.throws(() => new SerialDevice({ path: '', baudRate: 9600, createPort: mockPortFactory }), (e: unknown) => e instanceof SerialError && e.code === 'SERIAL_BAD_CONFIG');
  });
});

describe('SerialPlugin', () => {
  it('publishes readings, registers serial_send, drives an LED ring from assistant_state', async () => {
    const path = nextPath();
    const sdk = new FakeSdk({ name: 'serial', settings: { 'plugin.serial.driver': 'sim', 'plugin.serial.path': path, 'plugin.serial.led_ring': true } });
    const plugin = new SerialPlugin();
    await plugin.start(sdk);
    const device = plugin.serial!;
    assert.equal(device.isOpen, true);
    assert.deepEqual(sdk.events('plugin.serial.status'), [{ connected: true, path }]);
    assert.ok(sdk.log.messages('info').some((m) => /simulated driver/.test(m)));

    const reading = once(device, 'reading');
    binding(device).emitData('{"sensor":"door","open":true}\n');
    await reading;
    assert.deepEqual(sdk.events('plugin.serial.reading'), [{ sensor: 'door', open: true }]);

    const tool = sdk.tools.get('serial_send')!;
    const ctx = { input: { id: 'i', source: 'test', channel: 'console', text: '', kind: 'queued' as const, level: 0 as const, received_at: 0 }, signal: new AbortController().signal, call_id: 'c1' };
    assert.deepEqual(await tool.handler({ command: { cmd: 'relay', on: true } }, ctx), { sent: true });
    const answer = tool.handler({ command: { cmd: 'read', id: 7 }, await_reply: true }, ctx) as Promise<unknown>;
    await waitUntil(() => binding(device).recording.includes('"id":7'), 'the request to be written (it waits for its reply from then on)');
    binding(device).emitData('{"id":7,"value":3}\n');
    assert.deepEqual(await answer, { sent: true, reply: { id: 7, value: 3 } });

    sdk.publish('assistant_state', { state: 'thinking' });
    await waitUntil(() => binding(device).recording.includes('"led"'), 'the LED command to be written');
    const lines = binding(device).recording.toString('utf8').trim().split('\n');
    assert.deepEqual(lines.map((l) => JSON.parse(l) as unknown), [{ cmd: 'relay', on: true }, { cmd: 'read', id: 7 }, { cmd: 'led', state: 'thinking' }]);

    await assert.rejects(Promise.resolve(tool.handler({ command: 'on' }, ctx)), /JSON object/);
    await plugin.stop();
    assert.equal(sdk.subscriptionCount(), 0);
  });
});
