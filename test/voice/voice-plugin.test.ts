/**
 * The service's voice plugin (src/service/voice-wiring.ts) under the plugin
 * host: it takes the vocabulary from the bus only (a vocabulary announced
 * before it started reaches it at once), serves `listen` through the plugin
 * API while it runs, and everything it registered goes when the host stops it.
 * Simulated microphone and speaker, real pocketsphinx grammar.
 */
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import type { Vocabulary } from '../../src/intents/types.js';
import { VoiceServicePlugin, type ListenReport } from '../../src/service/voice-wiring.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { FakeProvider } from '../support/fake-provider.js';
import { silentLogger } from '../support/quiet.js';
import { fixturesDir } from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const VOCAB: Vocabulary = {
  entities: [{ id: 'standing_light', name: 'Standing Light', domain: 'light', area: 'Living Room', aliases: [] }],
  areas: ['Living Room'],
};

async function kernelWithVoice(): Promise<{ kernel: Kernel; voice: VoiceServicePlugin; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-voice-plugin-'));
  const settings = new ConfigRegistry(':memory:', { env: { HOMEAGENT__PLUGIN__MIC__DRIVER: 'sim', HOMEAGENT__PLUGIN__SPEAKER__DRIVER: 'sim' } });
  const kernel = new Kernel({ settings, dataDir, provider: new FakeProvider([], { content: 'The Standing Light is on.' }), log: silentLogger });
  const voice = new VoiceServicePlugin();
  kernel.use(new AssistantStatePlugin());
  kernel.use(voice);
  cleanups.push(async () => {
    await kernel.stop();
    settings.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { kernel, voice, dataDir };
}

test('the vocabulary reaches the grammar over the bus only, also when it was announced before the voice plugin started', async () => {
  const { kernel, voice } = await kernelWithVoice();
  // the home plugin (started earlier in the service) announced its devices before voice subscribed
  kernel.bus.publish('plugin.home.vocabulary', { vocabulary: VOCAB, entities: 1, areas: VOCAB.areas });
  await kernel.start();
  assert.equal(kernel.host.status().find((s) => s.name === 'voice')?.state, 'running');
  await voice.whenGrammarBuilt();
  const grammar = (voice.describe().stt as { grammar: { state: string; entities?: number } }).grammar;
  assert.equal(grammar.state, 'ready');
  assert.equal(grammar.entities, 1, 'the retained vocabulary, not an empty one');
  // a later change arrives the same way
  kernel.bus.publish('plugin.home.vocabulary', { vocabulary: { entities: [], areas: [] }, entities: 0, areas: [] });
  await voice.whenGrammarBuilt();
  assert.equal((voice.describe().stt as { grammar: { entities?: number } }).grammar.entities, 0);
});

test('listen is served through the plugin API while the plugin runs, and removed with everything else when the host stops it', async () => {
  const { kernel, voice, dataDir } = await kernelWithVoice();
  await kernel.start();
  const listen = kernel.services.commands.get('listen');
  assert.ok(listen, 'registered by the voice plugin');
  const wav = readFileSync(path.join(fixturesDir, 'turn on Standing Light.wav'));
  const lines: unknown[] = [];
  const res = (await listen({ files: [{ name: 'a.wav', data_b64: wav.toString('base64') }, { name: 'bad.wav', data_b64: Buffer.from('not a wav').toString('base64') }] }, { send: (d) => lines.push(d), signal: new AbortController().signal })) as {
    utterances: ListenReport[];
  };
  assert.equal(res.utterances.length, 2);
  assert.equal(res.utterances[1]!.status, 'error');
  assert.match(res.utterances[1]!.error ?? '', /not a usable WAV/);
  const first = res.utterances[0]!;
  assert.ok(['injected', 'rejected', 'no_speech'].includes(first.status), first.status);
  if (first.wav) assert.ok(first.wav.startsWith(path.join(dataDir, 'listen')));
  assert.equal(lines.length, 2, 'one progress line per recording');
  await assert.rejects(Promise.resolve(listen({ files: [] }, { send: () => undefined, signal: new AbortController().signal })), /at least one WAV/);

  await kernel.host.stop('voice');
  assert.equal(kernel.services.commands.get('listen'), undefined, 'gone with its plugin');
  assert.equal(kernel.bus.countOwner('voice'), 0, 'its subscriptions are gone');
  assert.equal(kernel.outputs.get('speaker'), undefined, 'its output channel is gone');
  assert.deepEqual(voice.describe(), { running: false });
});
