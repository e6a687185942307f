/**
 * The TtsEngine contract (test/voice/contracts/tts.ts) against every engine:
 * espeak-ng for real, Wyoming TTS against the Wyoming test peer, PiperTts
 * through a stand-in binary that speaks piper's command line (--model,
 * --output_raw; the real piper is not a Debian package and its voices are
 * not installed here), and the FakeTts the pipeline tests use.
 */
import { after } from 'node:test';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EspeakTts } from '../../src/voice/tts/espeak.js';
import { PiperTts } from '../../src/voice/tts/piper.js';
import { WyomingTts } from '../../src/voice/wyoming/tts-client.js';
import { TtsError } from '../../src/voice/errors.js';
import { startWyomingTestServer } from '../support/wyoming-test-server.js';
import { FakeTts } from './fakes.js';
import { ttsContract } from './contracts/tts.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tts-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A process that never finishes on its own (the engine spawns it synchronously inside synthesize()). */
const stuckBinary = script('stuck-tts', 'exec sleep 60');

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

ttsContract('EspeakTts (espeak-ng)', async () => ({
  engine: new EspeakTts(),
  // runTtsProcess spawns the child before synthesize() first awaits: the call is under way once made.
  stuck: () => ({ engine: new EspeakTts({ binary: stuckBinary }), working: async () => {} }),
  broken: () => new EspeakTts({ binary: path.join(dir, 'no-such-espeak-ng') }),
  brokenCode: 'TTS_FAILED',
  cleanup: async () => {},
}));

ttsContract('WyomingTts (Wyoming test peer)', async () => {
  const server = await startWyomingTestServer();
  const hanging = await startWyomingTestServer({ faults: { synthesize: 'hang' } });
  const port = await closedPort();
  return {
    engine: new WyomingTts({ host: server.host, port: server.port }),
    stuck: () => ({ engine: new WyomingTts({ host: hanging.host, port: hanging.port }), working: async () => void (await hanging.waitForEvent('synthesize')) }),
    broken: () => new WyomingTts({ host: '127.0.0.1', port }),
    brokenCode: 'WYOMING_CONNECT',
    cleanup: async () => {
      await server.close();
      await hanging.close();
    },
  };
});

ttsContract('PiperTts (stand-in piper binary)', async () => {
  // 100 samples of noise per byte of the input line, raw s16le, as `piper --output_raw` writes PCM.
  const piper = script('piper', 'read line\nn=$(printf %s "$line" | wc -c)\nhead -c $((n * 200)) /dev/urandom');
  const model = path.join(dir, 'en_US-test-medium.onnx');
  writeFileSync(model, 'onnx');
  writeFileSync(`${model}.json`, JSON.stringify({ audio: { sample_rate: 22050 } }));
  return {
    engine: new PiperTts({ binary: piper, model }),
    stuck: () => ({ engine: new PiperTts({ binary: stuckBinary, model }), working: async () => {} }),
    broken: () => new PiperTts({ binary: path.join(dir, 'no-such-piper'), model }),
    brokenCode: 'TTS_FAILED',
    cleanup: async () => {},
  };
});

ttsContract('FakeTts (pipeline tests)', async () => ({
  engine: new FakeTts(),
  stuck: () => {
    const tts = new FakeTts();
    let started!: () => void;
    const working = new Promise<void>((r) => (started = r));
    tts.gate = () => {
      started();
      return new Promise<void>(() => undefined);
    };
    return { engine: tts, working: () => working };
  },
  broken: () => {
    const tts = new FakeTts();
    tts.failure = new TtsError('fake', 'engine missing');
    return tts;
  },
  brokenCode: 'TTS_FAILED',
  cleanup: async () => {},
}));
