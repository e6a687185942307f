import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startWyomingTestServer, type WyomingTestServer, type AsrRequest } from '../support/wyoming-test-server.js';
import { describeWyoming, WyomingConnection } from '../../src/voice/wyoming/connection.js';
import { WyomingAsr, normaliseTranscript } from '../../src/voice/stt/wyoming-asr.js';
import { WyomingTts } from '../../src/voice/wyoming/tts-client.js';
import { WyomingWake, type WakeDetection } from '../../src/voice/wyoming/wake-client.js';
import { loadRecording, chunks, tone, noise } from './helpers.js';
import { HomeAgentError } from '../../src/kernel/errors.js';

const servers: WyomingTestServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function server(opts: Parameters<typeof startWyomingTestServer>[0] = {}): Promise<WyomingTestServer> {
  const s = await startWyomingTestServer(opts);
  servers.push(s);
  return s;
}
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
function code(c: string) {
  return (err: unknown) => err instanceof HomeAgentError && err.code === c;
}

test('describe -> info lists asr, tts and wake programs', async () => {
  const s = await server();
  const info = await describeWyoming({ host: s.host, port: s.port });
  assert.ok(Array.isArray(info.asr) && info.asr.length === 1);
  assert.ok(Array.isArray(info.tts) && info.tts.length === 1);
  assert.ok(Array.isArray(info.wake) && info.wake.length === 1);
});

test('ASR: a real recording streams as audio-chunks and the transcript comes back normalised', async () => {
  const pcm = loadRecording('turn on Standing Light.wav');
  let seen: AsrRequest | undefined;
  const s = await server({
    transcribe: (req) => {
      seen = req;
      return req.pcm.equals(pcm) ? ' Turn on Standing Light.' : 'wrong audio';
    },
  });
  const asr = new WyomingAsr({ host: s.host, port: s.port, language: 'en' });
  const session = asr.start();
  for (const c of chunks(pcm, 3200)) session.write(c);
  const r = await session.end();
  assert.equal(r.text, 'turn on standing light');
  assert.equal(r.rejected, false);
  assert.equal(r.engine, 'wyoming');
  assert.equal(r.confidence, 1);
  assert.ok(typeof r.finish_ms === 'number');
  assert.equal(seen!.rate, 16000);
  assert.equal(seen!.width, 2);
  assert.equal(seen!.channels, 1);
  assert.equal(seen!.language, 'en');
  const types = s.received.at(-1)!.map((e) => e.type);
  assert.deepEqual([types[0], types[1], types.at(-1)], ['transcribe', 'audio-start', 'audio-stop']);
  assert.ok(types.filter((t) => t === 'audio-chunk').length >= 10);
});

test('ASR: per-utterance language overrides the default; empty transcript is rejected', async () => {
  let lang: string | undefined;
  const s = await server({
    transcribe: (req) => {
      lang = req.language;
      return '';
    },
  });
  const session = new WyomingAsr({ host: s.host, port: s.port, language: 'en' }).start({ language: 'zh' });
  session.write(noise(200, -60));
  const r = await session.end();
  assert.equal(lang, 'zh');
  assert.equal(r.text, '');
  assert.equal(r.rejected, true);
});

test('ASR: typed errors for refused, timeout, bad frame, service error and close', async () => {
  const refused = new WyomingAsr({ host: '127.0.0.1', port: await closedPort() }).start();
  refused.write(noise(100, -60));
  await assert.rejects(refused.end(), code('WYOMING_CONNECT'));

  const cases: Array<[Parameters<typeof startWyomingTestServer>[0], string]> = [
    [{ faults: { transcribe: 'hang' } }, 'TIMEOUT'],
    [{ faults: { transcribe: 'bad-frame' } }, 'WYOMING_BAD_FRAME'],
    [{ faults: { transcribe: 'error' } }, 'WYOMING_ERROR'],
    [{ faults: { transcribe: 'close' } }, 'WYOMING_CLOSED'],
  ];
  for (const [opts, c] of cases) {
    const s = await server(opts);
    const session = new WyomingAsr({ host: s.host, port: s.port, transcriptTimeoutMs: 300 }).start();
    session.write(tone(100));
    await assert.rejects(session.end(), code(c), c);
  }
});

test('ASR: abort closes the connection and end() rejects', async () => {
  const s = await server({ faults: { transcribe: { delayMs: 200 } } });
  const session = new WyomingAsr({ host: s.host, port: s.port }).start();
  session.write(tone(100));
  session.abort();
  await assert.rejects(session.end());
});

test('normaliseTranscript keeps decimals and apostrophes', () => {
  assert.equal(normaliseTranscript(" What's the temperature? It's 21.5."), "what's the temperature it's 21.5");
  assert.equal(normaliseTranscript('打开客厅的灯。'), '打开客厅的灯');
});

test('TTS: synthesize returns the PCM and rate from audio-start; voice name is sent', async () => {
  const s = await server();
  const tts = new WyomingTts({ host: s.host, port: s.port, voice: 'en_US-test-medium' });
  const a = await tts.synthesize('Hello there.');
  assert.equal(a.sampleRate, 22050);
  assert.equal(a.pcm.length, 'Hello there.'.length * Math.round(22050 * 0.03) * 2);
  const sent = s.received.at(-1)!.find((e) => e.type === 'synthesize')!;
  assert.deepEqual(sent.data, { text: 'Hello there.', voice: { name: 'en_US-test-medium' } });
});

test('TTS: without a voice the language is sent', async () => {
  const s = await server();
  await new WyomingTts({ host: s.host, port: s.port }).synthesize('你好。', { language: 'zh' });
  assert.deepEqual(s.received.at(-1)![0]!.data.voice, { language: 'zh' });
});

test('TTS streaming: synthesize-start/chunk/stop yield audio per sentence while text still arrives', async () => {
  const s = await server();
  const tts = new WyomingTts({ host: s.host, port: s.port });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  async function* tokens() {
    for (const t of ['The light', ' is on. ', 'Anything']) yield t;
    await gate; // the model is still writing
    for (const t of [' else?', ' Bye']) yield t;
  }
  const got: number[] = [];
  for await (const a of tts.synthesizeStream(tokens())) {
    got.push(a.pcm.length);
    if (got.length === 1) release(); // first sentence arrived before the rest was written
  }
  assert.deepEqual(got, ['The light is on.', 'Anything else?', 'Bye'].map((t) => t.length * Math.round(22050 * 0.03) * 2));
  const types = s.received.at(-1)!.map((e) => e.type);
  assert.equal(types[0], 'synthesize-start');
  assert.equal(types.at(-1), 'synthesize-stop');
  assert.equal(types.filter((t) => t === 'synthesize-chunk').length, 5);
});

test('TTS: typed errors', async () => {
  await assert.rejects(new WyomingTts({ host: '127.0.0.1', port: await closedPort() }).synthesize('hi'), code('WYOMING_CONNECT'));
  const s1 = await server({ faults: { synthesize: 'error' } });
  await assert.rejects(new WyomingTts({ host: s1.host, port: s1.port }).synthesize('hi'), code('WYOMING_ERROR'));
  const s2 = await server({ faults: { synthesize: 'hang' } });
  await assert.rejects(new WyomingTts({ host: s2.host, port: s2.port, eventTimeoutMs: 200 }).synthesize('hi'), code('TIMEOUT'));
  const s3 = await server({ faults: { synthesize: 'bad-frame' } });
  await assert.rejects(new WyomingTts({ host: s3.host, port: s3.port }).synthesize('hi'), code('WYOMING_BAD_FRAME'));
  const s4 = await server({ faults: { synthesize: 'hang' } });
  const ac = new AbortController();
  const p = new WyomingTts({ host: s4.host, port: s4.port }).synthesize('hi', { signal: ac.signal });
  await s4.waitForEvent('synthesize'); // the service has the request and hangs
  ac.abort();
  await assert.rejects(p, code('ABORTED'));
});

test('wake: detect names are sent, detection arrives for the loud chunk with its timestamp', async () => {
  const s = await server();
  const wake = new WyomingWake({ host: s.host, port: s.port, names: ['ok_nabu'] });
  const detections: WakeDetection[] = [];
  let failure: Error | undefined;
  let got!: () => void;
  const detected = new Promise<void>((r) => (got = r));
  const session = wake.start({
    onDetection: (d) => {
      detections.push(d);
      got();
    },
    onError: (e) => (failure = e),
  });
  for (const c of chunks(noise(500, -50), 3200)) session.write(c);
  session.write(tone(100, -1));
  await detected;
  session.close();
  assert.equal(failure, undefined);
  assert.deepEqual(detections, [{ name: 'ok_nabu', timestamp: 600 }]);
  const first = s.received.at(-1)![0]!;
  assert.equal(first.type, 'detect');
  assert.deepEqual(first.data.names, ['ok_nabu']);
});

test('wake: audio-stop without detection gets not-detected (protocol check with a raw connection)', async () => {
  const s = await server();
  const c = await WyomingConnection.connect({ host: s.host, port: s.port });
  c.send({ type: 'detect' });
  c.send({ type: 'audio-start', data: { rate: 16000, width: 2, channels: 1 } });
  c.send({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload: noise(100, -50) });
  c.send({ type: 'audio-stop' });
  const ev = await c.next(2000, 'not-detected');
  c.close();
  assert.equal(ev.type, 'not-detected');
});

test('wake without reconnect: a refused connection reports onError with WYOMING_CONNECT', async () => {
  const port = await closedPort();
  const err = await new Promise<Error>((resolve) => {
    new WyomingWake({ host: '127.0.0.1', port, reconnect: false }).start({ onDetection: () => undefined, onError: resolve });
  });
  assert.ok(code('WYOMING_CONNECT')(err));
});
