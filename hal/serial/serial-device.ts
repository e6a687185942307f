/**
 * A line-based serial peripheral (a microcontroller with sensors, an LED ring):
 * one JSON object per line ('\n', a trailing '\r' is ignored) at a configurable
 * baud rate. Lines become `reading` events; `send` writes a JSON command line;
 * `request` sends a command with an `id` and waits for the line that answers
 * it (`{"id": ..., ...}`). When the device is unplugged (the port closes with
 * a disconnect, or opening fails) it reopens with backoff on the clock.
 */
import { EventEmitter } from 'node:events';
import type { SerialPortStream } from '@serialport/stream';
import { ReadlineParser } from '@serialport/parser-readline';
import type { Logger } from '../../src/kernel/log-types.js';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import { HalError } from '../common/errors.js';

/** Serial failures: SERIAL_NOT_OPEN, SERIAL_TIMEOUT, SERIAL_WRITE_FAILED, SERIAL_BAD_CONFIG. */
export class SerialError extends HalError {}

/** Makes an unopened port (`autoOpen: false`) for `path` at `baudRate` bit/s. */
export type PortFactory = (opts: { path: string; baudRate: number }) => SerialPortStream;

/** Events of a serial device. */
export interface SerialEvents {
  /** A JSON object line from the device (not an answer to a request). */
  reading: [Record<string, unknown>];
  /** A line that is not a JSON object. */
  invalid: [{ line: string; error: string }];
  open: [];
  /** The port closed; `disconnected` when the device went away (unplugged). */
  close: [{ disconnected: boolean; error?: string }];
  /** The next reopen attempt is in `delayMs`. */
  reconnecting: [{ attempt: number; delayMs: number; error: string }];
}

/** Options: device path, baud rate (bit/s), port factory, reconnect backoff (ms), clock, logger. */
export interface SerialDeviceOptions {
  path: string;
  baudRate: number;
  createPort: PortFactory;
  reconnect?: { initialMs?: number; maxMs?: number };
  clock?: Clock;
  log?: Logger;
  /** Longest accepted line in bytes (default 4096); longer lines are dropped as invalid. */
  maxLineBytes?: number;
}

/** Standard baud rates we accept. */
export const BAUD_RATES = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1000000] as const;

/** A JSON-lines serial device with reconnect. */
export class SerialDevice extends EventEmitter<SerialEvents> {
  private port: SerialPortStream | undefined;
  private timer: TimerHandle | undefined;
  private attempts = 0;
  private stopped = true;
  private seq = 0;
  private readonly pending = new Map<string, (reply: Record<string, unknown>) => void>();
  private readonly clock: Clock;

  constructor(private readonly opts: SerialDeviceOptions) {
    super();
    if (!(BAUD_RATES as readonly number[]).includes(opts.baudRate)) {
      throw new SerialError('SERIAL_BAD_CONFIG', `baud rate ${opts.baudRate} is not one of ${BAUD_RATES.join(', ')}`);
    }
    if (!opts.path) throw new SerialError('SERIAL_BAD_CONFIG', 'no serial device path configured');
    this.clock = opts.clock ?? systemClock;
  }

  /** The open port (the simulator injects device lines through its mock binding), or undefined. */
  get currentPort(): SerialPortStream | undefined {
    return this.port;
  }

  /** True while the port is open. */
  get isOpen(): boolean {
    return this.port?.isOpen === true;
  }

  /** Try to open; resolves after the first attempt (true when open). A failed attempt schedules reconnects. */
  async start(): Promise<boolean> {
    this.stopped = false;
    return this.connect();
  }

  private connect(): Promise<boolean> {
    let port: SerialPortStream;
    try {
      port = this.opts.createPort({ path: this.opts.path, baudRate: this.opts.baudRate });
    } catch (err) {
      this.scheduleReconnect(err instanceof Error ? err.message : String(err));
      return Promise.resolve(false);
    }
    this.port = port;
    return new Promise<boolean>((resolve) => {
      port.open((err) => {
        if (this.stopped || this.port !== port) {
          if (!err) port.close();
          resolve(false);
          return;
        }
        if (err) {
          this.port = undefined;
          this.scheduleReconnect(err.message);
          resolve(false);
          return;
        }
        this.attempts = 0;
        this.wire(port);
        this.opts.log?.info({ path: this.opts.path, baud_rate: this.opts.baudRate }, 'serial: open');
        this.emit('open');
        resolve(true);
      });
    });
  }

  private wire(port: SerialPortStream): void {
    const parser = port.pipe(new ReadlineParser({ delimiter: '\n', encoding: 'utf8' }));
    parser.on('data', (line: string) => this.onLine(line));
    port.on('error', (err: Error) => this.opts.log?.warn({ err: err.message }, 'serial: port error'));
    port.once('close', (err: (Error & { disconnected?: boolean }) | null) => {
      if (this.port === port) this.port = undefined;
      const disconnected = err?.disconnected === true;
      this.emit('close', { disconnected, error: err?.message });
      if (!this.stopped) {
        this.opts.log?.warn({ path: this.opts.path, err: err?.message }, 'serial: device went away, reconnecting');
        this.scheduleReconnect(err?.message ?? 'port closed');
      }
    });
  }

  private onLine(raw: string): void {
    const line = raw.replace(/\r$/, '').trim();
    if (!line) return;
    if (Buffer.byteLength(line) > (this.opts.maxLineBytes ?? 4096)) {
      this.emit('invalid', { line: line.slice(0, 80), error: 'line too long' });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      this.emit('invalid', { line, error: (err as Error).message });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.emit('invalid', { line, error: 'not a JSON object' });
      return;
    }
    const obj = value as Record<string, unknown>;
    const id = obj.id;
    if ((typeof id === 'string' || typeof id === 'number') && this.pending.has(String(id))) {
      this.pending.get(String(id))!(obj);
      return;
    }
    this.emit('reading', obj);
  }

  private scheduleReconnect(error: string): void {
    if (this.stopped || this.timer) return;
    this.attempts += 1;
    const initial = this.opts.reconnect?.initialMs ?? 1000;
    const max = this.opts.reconnect?.maxMs ?? 30_000;
    const delayMs = Math.min(max, initial * 2 ** Math.min(this.attempts - 1, 20));
    this.emit('reconnecting', { attempt: this.attempts, delayMs, error });
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) void this.connect();
    }, delayMs, { keepAlive: true });
  }

  /** Write one JSON command line. Rejects with SerialError SERIAL_NOT_OPEN / SERIAL_WRITE_FAILED. */
  async send(command: Record<string, unknown>): Promise<void> {
    const port = this.port;
    if (!port || !port.isOpen) throw new SerialError('SERIAL_NOT_OPEN', `serial device ${this.opts.path} is not connected`);
    const line = `${JSON.stringify(command)}\n`;
    await new Promise<void>((resolve, reject) => {
      port.write(line, 'utf8', (err) => {
        if (err) reject(new SerialError('SERIAL_WRITE_FAILED', `write to ${this.opts.path} failed: ${err.message}`, { cause: err }));
        else resolve();
      });
    });
  }

  /**
   * Send a command and wait for the line carrying the same `id` (one is
   * assigned when missing). Rejects SERIAL_TIMEOUT after `timeoutMs` (clock ms).
   */
  async request(command: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    const id = typeof command.id === 'string' || typeof command.id === 'number' ? String(command.id) : `r${++this.seq}`;
    const msg = { ...command, id: command.id ?? id };
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const t = this.clock.setTimeout(() => {
        this.pending.delete(id);
        reject(new SerialError('SERIAL_TIMEOUT', `no answer from ${this.opts.path} to command ${id} within ${timeoutMs} ms`));
      }, timeoutMs, { keepAlive: true });
      this.pending.set(id, (reply) => {
        this.clock.clearTimeout(t);
        this.pending.delete(id);
        resolve(reply);
      });
      this.send(msg).catch((err: unknown) => {
        this.clock.clearTimeout(t);
        this.pending.delete(id);
        reject(err);
      });
    });
  }

  /** Close the port and stop reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const port = this.port;
    this.port = undefined;
    if (port?.isOpen) await new Promise<void>((r) => port.close(() => r()));
    for (const [id, done] of [...this.pending]) {
      this.pending.delete(id);
      done({ id, error: 'serial device stopped' });
    }
  }
}
