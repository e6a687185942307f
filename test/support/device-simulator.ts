/**
 * Test peer: a tiny smart home on an MQTT broker, independent of the product's
 * code (its own mqtt.js client, its own reading of the fixture). It publishes
 * every `retained` entry of ../shared/fixtures/home/home.json with the retain
 * flag, then answers commands the way the devices would: a command on a
 * command topic is recorded (exact topic and payload) and answered by
 * publishing the new state on the matching state topic.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';

/** One command the simulator received. */
export interface ReceivedCommand {
  topic: string;
  payload: string;
}

interface Reaction {
  kind: 'mirror' | 'json-merge' | 'lock' | 'cover' | 'none';
  stateTopic?: string;
}

/** Absolute path of the fixture home (repo root is two levels above test/support). */
export const HOME_FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/fixtures/home/home.json');

/** The fixture as parsed JSON. */
export interface HomeFixture {
  about: string;
  areas: string[];
  retained: Array<{ topic: string; payload: unknown }>;
}

/** Load home.json. */
export function loadHomeFixture(): HomeFixture {
  return JSON.parse(readFileSync(HOME_FIXTURE, 'utf8')) as HomeFixture;
}

function expandBase(value: string, base: string | undefined): string {
  if (!base) return value;
  if (value.startsWith('~')) return base + value.slice(1);
  if (value.endsWith('~')) return value.slice(0, -1) + base;
  return value;
}

/** A running simulator. */
export class DeviceSimulator {
  /** Every message received on a command topic, in order. */
  readonly commands: ReceivedCommand[] = [];
  private client: MqttClient | undefined;
  private readonly reactions = new Map<string, Reaction>();
  private readonly jsonState = new Map<string, Record<string, unknown>>();
  private readonly waiters: Array<() => void> = [];
  /** Command topics the simulator should not answer (a device that is gone). */
  readonly mute = new Set<string>();
  /** How long a device takes to report its new state after a command, ms (0: at once). */
  reportDelayMs = 0;

  /**
   * `opts.clientId` + `opts.clean: false` give the simulator a persistent
   * session (with a persistent broker, commands sent while it is away are
   * delivered when it is back).
   */
  constructor(
    private readonly url: string,
    private readonly fixture: HomeFixture = loadHomeFixture(),
    private readonly opts: { clientId?: string; clean?: boolean; username?: string; password?: string; tls?: { ca: Buffer } } = {},
  ) {
    this.learn();
  }

  private learn(): void {
    for (const entry of this.fixture.retained) {
      const m = /^homeassistant\/(\w+)\/(?:[\w-]+\/)?[\w-]+\/config$/.exec(entry.topic);
      if (m && entry.payload && typeof entry.payload === 'object') {
        const p = entry.payload as Record<string, unknown>;
        const base = typeof p['~'] === 'string' ? (p['~'] as string) : undefined;
        const t = (k: string): string | undefined => (typeof p[k] === 'string' ? expandBase(p[k] as string, base) : undefined);
        const component = m[1];
        const cmd = t('cmd_t') ?? t('command_topic');
        const stat = t('stat_t') ?? t('state_topic');
        if (cmd) {
          let kind: Reaction['kind'] = 'mirror';
          if (component === 'lock') kind = 'lock';
          else if (component === 'cover') kind = 'cover';
          else if (component === 'button' || component === 'scene') kind = 'none';
          else if (p.schema === 'json') kind = 'json-merge';
          this.reactions.set(cmd, { kind, stateTopic: stat });
        }
        const tempCmd = t('temp_cmd_t');
        if (tempCmd) this.reactions.set(tempCmd, { kind: 'mirror', stateTopic: t('temp_stat_t') });
        const modeCmd = t('mode_cmd_t');
        if (modeCmd) this.reactions.set(modeCmd, { kind: 'mirror', stateTopic: t('mode_stat_t') });
      }
      if (entry.topic === 'zigbee2mqtt/bridge/devices' && Array.isArray(entry.payload)) {
        for (const d of entry.payload as Array<Record<string, unknown>>) {
          if (d.type === 'Coordinator' || typeof d.friendly_name !== 'string') continue;
          const base = `zigbee2mqtt/${d.friendly_name}`;
          this.reactions.set(`${base}/set`, { kind: 'json-merge', stateTopic: base });
        }
      }
      if (entry.payload && typeof entry.payload === 'object' && !Array.isArray(entry.payload)) {
        this.jsonState.set(entry.topic, { ...(entry.payload as Record<string, unknown>) });
      }
    }
  }

  /** The command topics the simulator answers. */
  commandTopics(): string[] {
    return [...this.reactions.keys()];
  }

  /** Connect, subscribe to the command topics and publish every retained entry. */
  async start(): Promise<void> {
    this.client = await mqtt.connectAsync(this.url, {
      clientId: this.opts.clientId ?? `device-sim-${process.pid}-${Math.random().toString(16).slice(2, 10)}`,
      clean: this.opts.clean ?? true,
      ...(this.opts.username ? { username: this.opts.username, password: this.opts.password } : {}),
      ...(this.opts.tls ? { ca: this.opts.tls.ca } : {}),
      reconnectPeriod: 200,
      connectTimeout: 5000,
    });
    this.client.on('message', (topic, payload) => this.onMessage(topic, payload.toString('utf8')));
    await this.client.subscribeAsync(this.commandTopics().map((t) => t), { qos: 1 });
    await this.publishRetained();
  }

  /** (Re)publish every retained entry of the fixture. */
  async publishRetained(): Promise<void> {
    const client = this.requireClient();
    for (const entry of this.fixture.retained) {
      const payload = typeof entry.payload === 'string' ? entry.payload : JSON.stringify(entry.payload);
      await client.publishAsync(entry.topic, payload, { retain: true, qos: 1 });
    }
  }

  /** Publish any message (tests use it for availability changes and bad payloads). */
  async publish(topic: string, payload: string | Buffer, retain = true): Promise<void> {
    await this.requireClient().publishAsync(topic, payload, { retain, qos: 1 });
  }

  private requireClient(): MqttClient {
    if (!this.client) throw new Error('device simulator not started');
    return this.client;
  }

  private onMessage(topic: string, payload: string): void {
    const reaction = this.reactions.get(topic);
    if (!reaction) return;
    this.commands.push({ topic, payload });
    for (const w of this.waiters.splice(0)) w();
    if (this.mute.has(topic) || !reaction.stateTopic) return;
    let out: string | undefined;
    switch (reaction.kind) {
      case 'mirror':
        out = payload;
        break;
      case 'lock':
        out = payload === 'LOCK' ? 'LOCKED' : payload === 'UNLOCK' ? 'UNLOCKED' : undefined;
        break;
      case 'cover':
        out = payload === 'OPEN' ? 'open' : payload === 'CLOSE' ? 'closed' : payload === 'STOP' ? 'stopped' : undefined;
        break;
      case 'json-merge': {
        let cmd: unknown;
        try {
          cmd = JSON.parse(payload);
        } catch {
          return;
        }
        if (!cmd || typeof cmd !== 'object') return;
        const next = { ...(this.jsonState.get(reaction.stateTopic) ?? {}), ...(cmd as Record<string, unknown>) };
        this.jsonState.set(reaction.stateTopic, next);
        out = JSON.stringify(next);
        break;
      }
      case 'none':
        break;
    }
    if (out === undefined) return;
    const report = (): void => void this.client?.publish(reaction.stateTopic, out, { retain: true, qos: 1 });
    if (this.reportDelayMs > 0) setTimeout(report, this.reportDelayMs);
    else report();
  }

  /** Resolves when at least `count` commands were received in total (rejects after `timeoutMs`). */
  async waitForCommands(count: number, timeoutMs = 10_000): Promise<ReceivedCommand[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.commands.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} commands, got ${this.commands.length}: ${JSON.stringify(this.commands)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.commands.slice();
  }

  /** Forget recorded commands. */
  clear(): void {
    this.commands.length = 0;
  }

  /** Clear every retained topic the simulator published, then disconnect. */
  async stop(clearRetained = false): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    if (clearRetained && client.connected) {
      for (const entry of this.fixture.retained) await client.publishAsync(entry.topic, '', { retain: true, qos: 1 });
    }
    await client.endAsync(true);
  }
}
