/**
 * The Wyoming wake service restarts (an add-on update, a reboot of the
 * machine it runs on): the box re-connects by itself and is woken again.
 * The test service (test/support/wyoming-test-server.ts, a loud chunk is a
 * detection) is stopped and started again on the same port; the reconnect
 * waits run on the FakeClock, and every other wait is for an event (a status
 * change, an event the service received), never a sleep.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { FakeClock } from '../../src/kernel/clock.js';
import { WyomingWake, type WakeDetection, type WakeStatus } from '../../src/voice/wyoming/wake-client.js';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { startWyomingTestServer, type WyomingTestServer } from '../support/wyoming-test-server.js';
import { FakeSdk, MemoryLogger } from '../support/fake-sdk.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard } from './fakes.js';
import { noise, tone } from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(port?: number): Promise<WyomingTestServer> {
  const s = await startWyomingTestServer(port === undefined ? {} : { port });
  cleanups.push(() => s.close());
  return s;
}

/** Resolves when `wake` reports a status matching `pred` (the current one counts). */
function until(wake: WyomingWake, pred: (s: WakeStatus) => boolean): Promise<WakeStatus> {
  if (pred(wake.status)) return Promise.resolve(wake.status);
  return new Promise((resolve) => {
    const off = wake.onStatus((s) => {
      if (!pred(s)) return;
      off();
      resolve(s);
    });
  });
}

/** Resolves at the next status change matching `pred` (the current status does not count). */
function next(wake: WyomingWake, pred: (s: WakeStatus) => boolean): Promise<WakeStatus> {
  return new Promise((resolve) => {
    const off = wake.onStatus((s) => {
      if (!pred(s)) return;
      off();
      resolve(s);
    });
  });
}

/** The number of `detect` events the service received so far, over all its connections. */
function detects(s: WyomingTestServer): number {
  return s.received.flat().filter((e) => e.type === 'detect').length;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('wake client: the service restarts on the same port; the session reconnects by itself (1 s, then 2 s) and detects again', async () => {
  const clock = new FakeClock();
  const log = new MemoryLogger();
  const first = await service();
  const wake = new WyomingWake({ host: first.host, port: first.port, names: ['ok_nabu'], clock, log });
  const found: WakeDetection[] = [];
  const errors: Error[] = [];
  let waiter: { n: number; resolve: () => void } | undefined;
  /** Resolves once `n` detections arrived. */
  const detections = (n: number) =>
    found.length >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { n, resolve }));
  const session = wake.start({
    onDetection: (d) => {
      found.push(d);
      if (waiter && found.length >= waiter.n) waiter.resolve();
    },
    onError: (e) => errors.push(e),
  });
  cleanups.push(() => session.close());
  await until(wake, (s) => s.state === 'connected');
  session.write(tone(100, -1));
  await first.waitForEvent('audio-chunk');
  await detections(1);

  await first.close(); // the service goes away
  const lost = await until(wake, (s) => s.state === 'waiting');
  assert.equal(lost.retry_ms, 1000);
  clock.advance(1000); // the first attempt: refused (nothing listens yet)
  const refused = await until(wake, (s) => s.state === 'waiting' && s.retry_ms === 2000);
  assert.ok(refused.error, 'why it failed is kept');
  session.write(tone(100, -1)); // said during the outage: kept (the last second), sent on reconnect

  const again = await service(first.port); // the service is back, same port
  clock.advance(2000);
  const up = await until(wake, (s) => s.state === 'connected' && s.connections === 2);
  assert.equal(up.connections, 2);
  await again.waitForEvent('detect');
  await detections(2); // the wake word said during the outage
  session.write(tone(100, -1));
  await detections(3);
  assert.deepEqual(found.map((d) => d.name), ['ok_nabu', 'ok_nabu', 'ok_nabu']);
  assert.deepEqual(errors, [], 'a reconnecting session does not give up');
  assert.deepEqual(again.received.flat().find((e) => e.type === 'detect')?.data.names, ['ok_nabu'], 'the wake words are asked for again');
  assert.equal(log.messages('warn').filter((m) => /reconnecting/.test(m)).length, 1, 'one warning per outage');
  assert.equal(log.messages('info').filter((m) => /connected again/.test(m)).length, 1);
  session.close();
  assert.equal(wake.status.state, 'closed');
  assert.equal(clock.pending, 0, 'no reconnect timer left after close');
});

test('wake client: the waits between attempts double up to maxRetryMs and reset after a connection', async () => {
  const clock = new FakeClock();
  const port = await freePort();
  const wake = new WyomingWake({ host: '127.0.0.1', port, clock, minRetryMs: 1000, maxRetryMs: 4000 });
  const session = wake.start({ onDetection: () => undefined, onError: () => undefined });
  cleanups.push(() => session.close());
  const waits: number[] = [];
  let st = await until(wake, (x) => x.state === 'waiting');
  for (let i = 0; i < 4; i++) {
    waits.push(st.retry_ms!);
    const refusedAgain = next(wake, (x) => x.state === 'waiting');
    clock.advance(st.retry_ms!);
    st = await refusedAgain;
  }
  assert.deepEqual(waits, [1000, 2000, 4000, 4000]);
  const s = await service(port);
  const connected = next(wake, (x) => x.state === 'connected');
  clock.advance(st.retry_ms!);
  await connected;
  await s.close();
  const after = await until(wake, (st) => st.state === 'waiting');
  assert.equal(after.retry_ms, 1000, 'a new outage starts from the shortest wait');
});

test('the box: after the wake service restarts, the wake word starts listening again (no restart of the box)', async () => {
  const clock = new FakeClock();
  const first = await service();
  const wake = new WyomingWake({ host: first.host, port: first.port, names: ['ok_nabu'], clock });
  const sdk = new FakeSdk({ name: 'voice', settings: { 'plugin.voice.no_speech_timeout_ms': 60_000 } });
  const mic = new FakeMic();
  const states = new AssistantStatePlugin();
  states.start(sdk);
  const voice = new VoicePlugin({ microphone: mic, speaker: new FakeSpeaker(), stt: new FakeStt(() => heard('hello')), tts: new FakeTts(), wake });
  await voice.start(sdk);
  cleanups.push(
    () => voice.stop(),
    () => states.stop(),
    () => sdk.cleanup(),
  );
  const nth = (state: string, n = 1) => sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === state, n);
  await until(wake, (s) => s.state === 'connected');
  await mic.say(tone(200, -1)); // "ok nabu"
  await nth('listening');
  sdk.stop('test'); // back to idle, the microphone stays with the wake word
  await nth('idle');

  await first.close();
  await until(wake, (s) => s.state === 'waiting');
  const again = await service(first.port);
  clock.advance(wake.status.retry_ms!);
  await until(wake, (s) => s.state === 'connected' && s.connections === 2);
  await again.waitForEvent('detect');
  await mic.say(noise(100, -50)); // quiet room: nothing
  assert.equal(detects(again), 1);
  await mic.say(tone(200, -1)); // "ok nabu" again
  await nth('listening', 2);
  assert.equal(states.state, 'listening');
});

test('the box: mute and unmute with a wake word keep one wake session (the old one is closed, not left reconnecting)', async () => {
  const s = await service();
  const wake = new WyomingWake({ host: s.host, port: s.port, clock: new FakeClock() });
  const sdk = new FakeSdk({ name: 'voice' });
  const voice = new VoicePlugin({ microphone: new FakeMic(), speaker: new FakeSpeaker(), stt: new FakeStt(() => heard('hello')), tts: new FakeTts(), wake });
  await voice.start(sdk);
  cleanups.push(
    () => voice.stop(),
    () => sdk.cleanup(),
  );
  await until(wake, (st) => st.state === 'connected');
  const seen: string[] = [];
  wake.onStatus((st) => seen.push(st.state));
  const reconnected = next(wake, (st) => st.state === 'connected');
  await voice.setMuted(true);
  await voice.setMuted(false);
  await reconnected;
  await s.waitForEvent('audio-stop');
  assert.deepEqual(seen, ['closed', 'connecting', 'connected'], 'the old session closed before the new one started');
  assert.ok(s.received[0]!.some((e) => e.type === 'audio-stop'), 'the first connection got audio-stop');
});
