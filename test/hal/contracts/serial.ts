/**
 * Serial contract suite: a SerialDevice over a given port binding must turn
 * JSON lines into readings, write commands as JSON lines, match replies by id,
 * and refuse to send while disconnected. Run on @serialport/binding-mock.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { SerialError, type SerialDevice } from '../../../hal/serial/serial-device.js';
import { waitUntil } from '../../support/wait.js';

/** A started device plus a way to make the peripheral say a line and read what it was sent. */
export interface SerialHarness {
  device: SerialDevice;
  /** The peripheral writes these raw bytes to us. */
  deviceSays(raw: string): void;
  /** Everything the peripheral received so far (utf8). */
  received(): string;
  cleanup(): Promise<void>;
}

/** Register the serial contract for one binding. */
export function serialContract(name: string, factory: () => Promise<SerialHarness>): void {
  describe(`SerialDevice contract: ${name}`, () => {
    async function withSerial(fn: (h: SerialHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        await h.device.stop();
        await h.cleanup();
      }
    }

    it('JSON object lines become readings; split writes, CRLF and garbage are handled', () =>
      withSerial(async (h) => {
        const readings: Array<Record<string, unknown>> = [];
        const invalid: string[] = [];
        h.device.on('reading', (r) => readings.push(r));
        h.device.on('invalid', (e) => invalid.push(e.line));
        const two = new Promise<void>((resolve) =>
          h.device.on('reading', () => {
            if (readings.length === 3) resolve();
          }),
        );
        h.deviceSays('{"sensor":"temp","value":21.5}\r\n{"sensor":"hum');
        h.deviceSays('","value":40}\nnot json\n[1,2]\n\n');
        h.deviceSays('{"button":1}\n');
        await two;
        assert.deepEqual(readings, [{ sensor: 'temp', value: 21.5 }, { sensor: 'hum', value: 40 }, { button: 1 }]);
        assert.deepEqual(invalid, ['not json', '[1,2]']);
      }));

    it('send() writes one JSON line', () =>
      withSerial(async (h) => {
        await h.device.send({ cmd: 'relay', on: true });
        await h.device.send({ cmd: 'led', state: 'idle' });
        assert.equal(h.received(), '{"cmd":"relay","on":true}\n{"cmd":"led","state":"idle"}\n');
      }));

    it('request() returns the line with the same id, not as a reading', () =>
      withSerial(async (h) => {
        const readings: unknown[] = [];
        h.device.on('reading', (r) => readings.push(r));
        const reply = h.device.request({ cmd: 'read', sensor: 'co2' }, 5000);
        await waitUntil(() => /"id":"r1"/.test(h.received()), 'the request to be written');
        h.deviceSays('{"sensor":"temp","value":1}\n{"id":"r1","co2":612}\n');
        assert.deepEqual(await reply, { id: 'r1', co2: 612 });
        // Both lines came in one chunk: the reading was emitted while the chunk was parsed, before the reply resolved.
        assert.deepEqual(readings, [{ sensor: 'temp', value: 1 }]);
      }));

    it('after stop(), send() rejects with SERIAL_NOT_OPEN', () =>
      withSerial(async (h) => {
        const closed = once(h.device, 'close');
        await h.device.stop();
        await closed;
        assert.equal(h.device.isOpen, false);
        await assert.rejects(h.device.send({ cmd: 'x' }), (e: unknown) => e instanceof SerialError && e.code === 'SERIAL_NOT_OPEN');
      }));
  });
}
