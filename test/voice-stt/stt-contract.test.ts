/**
 * The SttEngine contract (test/voice/contracts/stt.ts) against every engine:
 * the real pocketsphinx of Debian 12 with the fixture home's grammar, Wyoming
 * ASR against the Wyoming test peer, and the FakeStt the pipeline tests use.
 */
import net from 'node:net';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { WyomingAsr } from '../../src/voice/stt/wyoming-asr.js';
import { SttUnavailableError } from '../../src/voice/stt/errors.js';
import { startWyomingTestServer } from '../support/wyoming-test-server.js';
import { FakeStt, heard, rejected } from '../voice/fakes.js';
import { loadRecording } from '../voice/helpers.js';
import { sttContract } from '../voice/contracts/stt.js';
import { fixtureVocabulary } from './home-vocab.js';
import { asThePipelineHearsIt } from './wav.js';

const COMMAND = 'turn on Standing Light.wav';
const speech = () => ({ pcm: asThePipelineHearsIt(loadRecording(COMMAND)), text: 'turn on standing light' });

/** Largest absolute sample (speech is far above the -60 dBFS room noise). */
function peak(pcm: Buffer): number {
  let p = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) p = Math.max(p, Math.abs(pcm.readInt16LE(i)));
  return p;
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

sttContract('PocketsphinxStt (Debian pocketsphinx_batch, fixture home grammar)', async () => {
  const engine = new PocketsphinxStt();
  await engine.setVocabulary(fixtureVocabulary());
  return {
    engine,
    speech: speech(),
    broken: () => {
      // The grammar is built (a build is pending when start() is called, and the session waits for it); only the decoder binary is missing.
      const e = new PocketsphinxStt({ binary: 'no-such-pocketsphinx-binary' });
      e.setVocabulary(fixtureVocabulary()).catch(() => undefined);
      return e;
    },
    brokenCode: 'STT_UNAVAILABLE',
    cleanup: async () => {},
  };
});

sttContract('WyomingAsr (Wyoming test peer)', async () => {
  // Like a dictation service: speech gives its transcript (with the casing and punctuation a service sends), room noise nothing.
  const server = await startWyomingTestServer({ transcribe: (req) => (peak(req.pcm) > 3000 ? ' Turn on Standing Light.' : '') });
  const port = await closedPort();
  return {
    engine: new WyomingAsr({ host: server.host, port: server.port, language: 'en' }),
    speech: speech(),
    broken: () => new WyomingAsr({ host: '127.0.0.1', port }),
    brokenCode: 'WYOMING_CONNECT',
    cleanup: () => server.close(),
  };
});

sttContract('FakeStt (pipeline tests)', async () => ({
  engine: new FakeStt((pcm) => (peak(pcm) > 3000 ? heard('turn on standing light') : rejected())),
  speech: speech(),
  broken: () =>
    new FakeStt(() => {
      throw new SttUnavailableError('fake engine: binary missing');
    }),
  brokenCode: 'STT_UNAVAILABLE',
  cleanup: async () => {},
}));
