/**
 * What every attack runs against, started fresh per attack so one attack's
 * damage never skews another's figures: a real Mosquitto on a free
 * 127.0.0.1 port (test/support/mosquitto.ts; never 1883), optionally the
 * fixture home answered by the independent device simulator, the shared LLM
 * test server, and the service as its own process (box.ts). `Scope` runs the
 * clean-ups in reverse order whatever happened.
 */
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { DeviceSimulator } from '../support/device-simulator.js';
import { startLlmTestServer, type LlmTestServer } from '../support/llm-test-server.js';
import { startBox, type Box } from './box.js';

/** Clean-ups of one attack, run in reverse order by `close()` (each one's failure is ignored). */
export class Scope {
  private readonly fns: Array<() => unknown> = [];
  /** Register a clean-up. */
  defer(fn: () => unknown): void {
    this.fns.push(fn);
  }
  /** Run every clean-up, newest first. */
  async close(): Promise<void> {
    while (this.fns.length) {
      const fn = this.fns.pop()!;
      try {
        await fn();
      } catch {
        /* the next clean-up still runs */
      }
    }
  }
}

/** A running world. */
export interface World {
  broker: MosquittoBroker;
  sim?: DeviceSimulator;
  llm: LlmTestServer;
  box: Box;
  /** The HOMEAGENT__ overrides the box was started with (to restart it the same way). */
  env: Record<string, string>;
}

/** Options of startWorld. */
export interface WorldOptions {
  /** Announce the fixture home (../shared/fixtures/home/home.json) with the device simulator (default true). */
  home?: boolean;
  /** More HOMEAGENT__ overrides. */
  env?: Record<string, string>;
  /** Extra mosquitto.conf lines. */
  mosquittoConfig?: string[];
  /** Broker persistence (retained messages and sessions survive its restart), default off. */
  mosquittoPersistence?: boolean;
}

/** Devices the fixture home announces (the box knows each once). */
export const FIXTURE_DEVICES = 14;

/**
 * Start broker, home, LLM test server and service; with the home, resolves
 * once the service knows every fixture device (failure deadline 60 s).
 */
export async function startWorld(scope: Scope, opts: WorldOptions = {}): Promise<World> {
  const broker = await startMosquitto({ extraConfig: opts.mosquittoConfig ?? [], persistence: opts.mosquittoPersistence === true });
  scope.defer(() => broker.stop());
  let sim: DeviceSimulator | undefined;
  if (opts.home !== false) {
    sim = new DeviceSimulator(broker.url);
    await sim.start();
    scope.defer(() => sim!.stop());
    await sim.publishRetained();
  }
  const llm = await startLlmTestServer({ defaultReply: { content: 'I am not sure how to help with that.' } });
  scope.defer(() => llm.close());
  const env = {
    HOMEAGENT__PLUGIN__MQTT__URL: broker.url,
    HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: llm.url,
    ...opts.env,
  };
  const box = await startBox({ env });
  scope.defer(() => box.close());
  if (sim) await waitForDevices(box, FIXTURE_DEVICES, 60_000);
  await waitForGrammar(box, 60_000);
  return { broker, sim, llm, box, env };
}

/**
 * Resolves once the service's speech grammar is built (`status` voice.stt.grammar.state
 * "ready" or "failed"): the end of its start, so that no attack measures the start
 * (the grammar is built on a worker thread whose memory is the process's until it
 * exits). Throws after `deadlineMs` (a failure deadline).
 */
export async function waitForGrammar(box: Box, deadlineMs: number): Promise<string> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const st = await box.status();
    const voice = st.voice as { stt?: { grammar?: { state?: string } } } | undefined;
    const state = voice?.stt?.grammar?.state ?? 'unknown';
    if (state === 'ready' || state === 'failed' || voice === undefined) return state;
    if (Date.now() > end) throw new Error(`the service's speech grammar is still "${state}" after ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once `status` counts at least `n` devices; throws after `deadlineMs` (a failure deadline). */
export async function waitForDevices(box: Box, n: number, deadlineMs: number): Promise<number> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const st = await box.status();
    if (st.devices >= n) return st.devices;
    if (Date.now() > end) throw new Error(`the service knows ${st.devices} devices after ${deadlineMs} ms, expected ${n}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A device as the `devices` command lists it. */
export interface DeviceView {
  id: string;
  name: string;
  component: string;
  area?: string;
  available: boolean;
  state: Record<string, unknown>;
}

/** The `devices` list. */
export async function devices(box: Box): Promise<DeviceView[]> {
  return (await box.call('devices')) as DeviceView[];
}

/** A state without its timestamp, for comparisons. */
export function stateOf(d: DeviceView | undefined): Record<string, unknown> {
  if (!d) return {};
  const { updated_at: _u, ...rest } = d.state ?? {};
  return rest;
}

/** Resolves after `ms` (used only to space out an outage, never to wait for a result). */
export const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
