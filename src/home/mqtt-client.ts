/**
 * The box's MQTT connection (mqtt.js 5): URL, credentials and TLS from
 * settings; a client id given by the caller (unique per box and per role,
 * persisted by the plugin) placed in a fresh options object on every
 * connect, so two clients never share one; reconnect with exponential
 * backoff from `reconnectMinMs` capped at `reconnectMaxMs` (default 2 s)
 * with jitter (each pause drawn from the upper half of the current step, so
 * boxes that lost one broker do not come back in lock-step, and a box is
 * back within the cap of the broker's return); the wanted subscriptions re-made after every (re)connect; a
 * retained last-will `offline` on the availability topic and `online` once
 * connected. Commands are QoS 1: `publishCommand` resolves when the broker
 * acknowledges (PUBACK), also when the message had to wait for a reconnect,
 * and rejects with HomeError COMMAND_TIMEOUT after the timeout, removing the
 * message from mqtt.js's outgoing queue so it is never sent after the
 * failure was reported.
 */
import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Logger } from '../kernel/log-types.js';
import { HomeError } from './errors.js';
import { WarnLimiter } from './log-limit.js';
import type { MqttCommand } from './commands.js';
import { BROKER_DOWN_FAIL_MS } from './settings.js';

/** Said of a command the broker did not acknowledge while connected: it was sent and may be carried out later. */
export const MAY_STILL_ARRIVE = 'it was sent and may still be carried out if the broker recovers';

/** TLS options; `ca`/`cert`/`key` are PEM text or file paths. */
export interface MqttTls {
  ca?: string;
  cert?: string;
  key?: string;
  /** Default true. */
  rejectUnauthorized?: boolean;
}

/** Connection settings (plugin.mqtt.* settings). */
export interface MqttConnectionSettings {
  /** mqtt://host:1883, mqtts://host:8883, ws://... */
  url: string;
  username?: string;
  password?: string;
  tls?: MqttTls;
  clientId: string;
  /** Last-will / birth topic: retained "online"/"offline". */
  availabilityTopic?: string;
  /** Keepalive in s (default 30). */
  keepaliveS?: number;
  /** First reconnect delay in ms (default 500), doubled up to reconnectMaxMs (default 2000), with jitter. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Connect timeout in ms (default 10000). */
  connectTimeoutMs?: number;
}

/** Handlers the client calls. */
export interface MqttClientHooks {
  log: Logger;
  onMessage(topic: string, payload: Buffer, retained: boolean): void;
  onConnectionChange?(connected: boolean): void;
  /** A SUBSCRIBE went out (`onSubscribed` follows with its SUBACK, or its failure): the broker's retained messages for it are still to come. */
  onSubscribing?(): void;
  onSubscribed?(): void;
  /** Random number in [0, 1) for the jitter (tests inject one); default Math.random. */
  random?: () => number;
}

/** Default cap of the reconnect back-off, ms: a box is back within about 2 s of its broker. */
export const DEFAULT_RECONNECT_MAX_MS = 2000;

function pem(v: string | undefined): string | undefined {
  if (!v) return undefined;
  if (v.includes('-----BEGIN')) return v;
  return readFileSync(v, 'utf8');
}

/** See module comment. */
export class HomeMqttClient {
  private client: MqttClient | undefined;
  private readonly wanted = new Set<string>();
  private backoff: number;
  private closing = false;
  private readonly errors: WarnLimiter;
  private readonly delays: number[] = [];

  constructor(private readonly settings: MqttConnectionSettings, private readonly hooks: MqttClientHooks) {
    this.backoff = this.minMs;
    this.errors = new WarnLimiter({ log: hooks.log, now: Date.now, windowMs: 30_000 });
  }

  private get minMs(): number {
    return this.settings.reconnectMinMs ?? 500;
  }

  private get maxMs(): number {
    return Math.max(this.minMs, this.settings.reconnectMaxMs ?? DEFAULT_RECONNECT_MAX_MS);
  }

  /** One pause of the current step: uniformly in [step/2, step], ms. */
  private jittered(step: number): number {
    const r = (this.hooks.random ?? Math.random)();
    return Math.max(1, Math.round(step / 2 + (step / 2) * Math.min(Math.max(r, 0), 1)));
  }

  /** The reconnect pauses chosen so far (newest last, at most 100), ms: what the back-off did. */
  get reconnectDelays(): readonly number[] {
    return this.delays;
  }

  private schedule(client: MqttClient, step: number): void {
    const ms = this.jittered(step);
    client.options.reconnectPeriod = ms;
    this.delays.push(ms);
    if (this.delays.length > 100) this.delays.shift();
  }

  /** Since when (Date.now() ms) the broker has been out of reach: from start() until the first connect, and from each close; undefined while connected. */
  private downSince: number | undefined;

  /** True while connected to the broker. */
  get connected(): boolean {
    return this.client?.connected === true;
  }

  /**
   * Start connecting. Resolves at once; an unreachable broker is retried with
   * backoff in the background (the box works offline and catches up).
   */
  start(): void {
    if (this.client) return;
    const s = this.settings;
    const opts: IClientOptions = {
      clientId: s.clientId,
      clean: true,
      keepalive: s.keepaliveS ?? 30,
      reconnectPeriod: this.jittered(this.minMs),
      connectTimeout: s.connectTimeoutMs ?? 10_000,
      resubscribe: false,
      protocolVersion: 4,
      ...(s.username ? { username: s.username } : {}),
      ...(s.password ? { password: s.password } : {}),
      ...(s.availabilityTopic ? { will: { topic: s.availabilityTopic, payload: Buffer.from('offline'), qos: 1 as const, retain: true } } : {}),
    };
    if (s.tls) {
      opts.ca = pem(s.tls.ca);
      opts.cert = pem(s.tls.cert);
      opts.key = pem(s.tls.key);
      opts.rejectUnauthorized = s.tls.rejectUnauthorized ?? true;
    }
    const client = mqtt.connect(s.url, opts);
    this.client = client;
    this.downSince = Date.now();
    client.on('connect', () => {
      this.downSince = undefined;
      this.backoff = this.minMs;
      client.options.reconnectPeriod = this.jittered(this.backoff);
      this.hooks.log.info({ url: s.url, clientId: s.clientId }, 'MQTT connected');
      if (this.wanted.size) {
        this.hooks.onSubscribing?.();
        client.subscribe([...this.wanted], { qos: 1 }, (err) => {
          if (err) this.hooks.log.warn({ err: err.message }, 'MQTT subscribe failed');
          this.hooks.onSubscribed?.();
        });
      }
      if (s.availabilityTopic) client.publish(s.availabilityTopic, 'online', { qos: 1, retain: true });
      this.hooks.onConnectionChange?.(true);
    });
    // mqtt.js arms its reconnect timer from options.reconnectPeriod when the connection closes, before our
    // 'close' listener runs: the pause after an attempt is therefore chosen when the attempt starts ('reconnect').
    client.on('reconnect', () => {
      this.backoff = Math.min(this.backoff * 2, this.maxMs);
      this.schedule(client, this.backoff);
    });
    client.on('close', () => {
      if (this.closing) return;
      this.downSince ??= Date.now();
      this.hooks.onConnectionChange?.(false);
    });
    client.on('offline', () => this.hooks.log.warn({ url: s.url, retry_ms: client.options.reconnectPeriod, retry_max_ms: this.maxMs }, 'MQTT broker unreachable; retrying'));
    // A broker that stays down fails every attempt the same way: one line per kind of error and window, with a count.
    client.on('error', (err) => this.errors.warn(err.message.replace(/\d+/g, 'N'), { err: err.message, url: s.url }, 'MQTT error'));
    client.on('message', (topic, payload, packet) => {
      try {
        this.hooks.onMessage(topic, payload, packet.retain === true);
      } catch (err) {
        this.hooks.log.error({ err, topic }, 'MQTT message handler failed');
      }
    });
  }

  /** Make the subscriptions equal to `filters` (QoS 1); kept across reconnects. */
  setSubscriptions(filters: Iterable<string>): void {
    const next = new Set(filters);
    const add = [...next].filter((f) => !this.wanted.has(f));
    const remove = [...this.wanted].filter((f) => !next.has(f));
    this.wanted.clear();
    for (const f of next) this.wanted.add(f);
    const c = this.client;
    if (!c?.connected) return;
    if (add.length) {
      this.hooks.onSubscribing?.();
      c.subscribe(add, { qos: 1 }, (err) => {
        if (err) this.hooks.log.warn({ err: err.message }, 'MQTT subscribe failed');
        this.hooks.onSubscribed?.();
      });
    }
    if (remove.length) c.unsubscribe(remove);
  }

  /**
   * Publish one command (QoS >= 1). Resolves on PUBACK; while the broker is
   * down the message waits in mqtt.js's outgoing store and goes out after the
   * reconnect. Rejects with HomeError COMMAND_TIMEOUT after `timeoutMs`
   * (the message is withdrawn), COMMAND_FAILED on a client error,
   * MQTT_NOT_STARTED before start(), and BROKER_UNREACHABLE at once, sending
   * nothing, when the broker has been out of reach for `downFailMs`
   * (plugin.mqtt.broker_down_fail_ms, default BROKER_DOWN_FAIL_MS) or more:
   * a short drop waits for the reconnect, a broker that is down
   * does not hold the reply for `timeoutMs` (a tester's command waited
   * 10 s with every device shown unavailable).
   */
  publishCommand(cmd: MqttCommand, timeoutMs: number, downFailMs = BROKER_DOWN_FAIL_MS): Promise<void> {
    const c = this.client;
    if (!c) return Promise.reject(new HomeError('MQTT_NOT_STARTED', 'the MQTT client is not started'));
    const down = this.downSince === undefined || c.connected ? 0 : Date.now() - this.downSince;
    if (this.downSince !== undefined && !c.connected && down >= downFailMs) {
      return Promise.reject(new HomeError('BROKER_UNREACHABLE', `the MQTT broker ${withoutUserinfo(this.settings.url)} has been unreachable for ${Math.round(down / 1000)} s; the command to ${cmd.topic} was not sent`));
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const cb = (err?: Error | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(new HomeError('COMMAND_FAILED', `publishing to ${cmd.topic} failed: ${err.message}`, { cause: err }));
        else resolve();
      };
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        for (const [id, entry] of Object.entries(c.outgoing)) {
          if (entry.cb === cb) c.removeOutgoingMessage(Number(id));
        }
        // Connected (a hung broker): the message left on the connection and cannot be called back (a tester's was carried out after the broker resumed).
        reject(new HomeError('COMMAND_TIMEOUT', `the broker did not acknowledge the command to ${cmd.topic} within ${timeoutMs} ms${c.connected ? `; ${MAY_STILL_ARRIVE}` : ' (broker unreachable)'}`));
      }, timeoutMs);
      c.publish(cmd.topic, cmd.payload, { qos: cmd.qos, retain: cmd.retain }, cb);
    });
  }

  /** Publish a state/discovery message of the box itself (fire and forget, QoS 1). */
  publish(topic: string, payload: string, retain: boolean): void {
    this.client?.publish(topic, payload, { qos: 1, retain }, (err) => {
      if (err) this.hooks.log.debug({ topic, err: err.message }, 'MQTT publish failed');
    });
  }

  /** Publish `offline` on the availability topic and disconnect. */
  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (!c) return;
    this.closing = true;
    const s = this.settings;
    if (c.connected && s.availabilityTopic) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        c.publish(s.availabilityTopic as string, 'offline', { qos: 1, retain: true }, () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        c.end(true, {}, () => resolve());
      }, 1000);
      c.end(false, {}, () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/** `url` without a user name or password in it (mqtt://user:secret@host -> mqtt://host): what a message may show. */
function withoutUserinfo(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
