/**
 * The assistant-state plugin on a real kernel: it alone publishes
 * `assistant_state`, from the kernel's turn facts and the voice pipeline's
 * activity. Regression: the kernel used to publish `idle` when the turn
 * ended, while the speaker was still talking.
 */
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Cap } from '../../src/kernel/output-types.js';
import type { AssistantState } from '../../src/kernel/assistant-state.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { FakeProvider } from '../support/fake-provider.js';
import { silentLogger } from '../support/quiet.js';
import { FakeSpeaker, FakeStt, FakeTts, heard } from './fakes.js';
import { loadRecording, pad } from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function kernelWith(build: (k: Kernel) => void): Promise<{ kernel: Kernel; provider: FakeProvider; states: AssistantState[]; waitFor: (s: AssistantState, nth?: number) => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-state-'));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const provider = new FakeProvider([]);
  const kernel = new Kernel({ settings, dataDir, provider, log: silentLogger });
  const states: AssistantState[] = [];
  const waiters: Array<() => void> = [];
  kernel.bus.subscribe('_test_', 'assistant_state', (e) => {
    states.push(e.state);
    for (const w of waiters.splice(0)) w();
  });
  build(kernel);
  await kernel.start();
  cleanups.push(async () => {
    await kernel.stop();
    settings.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  // Wait for the nth occurrence of a state: an event, not a sleep (the test runner's timeout is the deadline).
  const waitFor = async (s: AssistantState, nth = 1): Promise<void> => {
    while (states.filter((x) => x === s).length < nth) await new Promise<void>((r) => waiters.push(r));
  };
  return { kernel, provider, states, waitFor };
}

test('regression: the turn finishes while the speaker still plays the reply: speaking until the speaker has finished, then idle', async () => {
  const speaker = new FakeSpeaker();
  speaker.hold = true; // the reply plays until the test lets it finish
  const voice = new VoicePlugin({ speaker, stt: new FakeStt(() => heard('turn on the light')), tts: new FakeTts(), wake: null });
  const { kernel, provider, states, waitFor } = await kernelWith((k) => {
    k.use(new AssistantStatePlugin());
    k.use(voice);
  });
  provider.enqueue({ content: 'The light is on.' });
  const finished = new Promise<void>((resolve) => kernel.bus.subscribe('_test_', 'turn.finished', () => resolve()));
  const out = await voice.feedUtterance(pad(loadRecording('turn on Standing Light.wav'), 600, 1500, -60).pcm);
  assert.equal(out.status, 'injected');
  await out.turn;
  await finished;
  await speaker.waitForPlays(1);
  assert.equal(states[states.length - 1], 'speaking', `the turn is over, the speaker still talks: ${states.join(' ')}`);
  assert.ok(!states.includes('idle'), 'no idle while the speaker talks');
  speaker.finishNext();
  await waitFor('idle');
  assert.deepEqual(states, ['listening', 'thinking', 'speaking', 'idle']);
});

test('console only (no voice pipeline): the plugin still owns the state: thinking while a turn runs, idle after', async () => {
  const { kernel, provider, states, waitFor } = await kernelWith((k) => {
    k.use(new AssistantStatePlugin());
    k.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', () => undefined);
  });
  provider.enqueue({ content: 'Hello.' });
  const res = await kernel.injectInput('console', 'console', 'hi');
  assert.equal(res.status, 'done');
  await waitFor('idle');
  assert.deepEqual(states, ['thinking', 'idle']);
});

test('the kernel itself publishes no assistant_state: without the plugin a turn leaves none', async () => {
  const { kernel, provider, states } = await kernelWith((k) => {
    k.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', () => undefined);
  });
  provider.enqueue({ content: 'Hello.' });
  const seen: string[] = [];
  kernel.bus.subscribe('_test_', 'turn.started', (e) => seen.push(`started ${e.input.channel}`));
  kernel.bus.subscribe('_test_', 'turn.finished', (e) => seen.push(`finished ${e.status}`));
  await kernel.injectInput('console', 'console', 'hi');
  kernel.agent.stop('test');
  assert.deepEqual(states, []);
  assert.deepEqual(seen, ['started console', 'finished done'], 'the turn facts are on the bus');
});

test('stop: idle at once, while the reply was playing', async () => {
  const speaker = new FakeSpeaker();
  speaker.hold = true;
  const voice = new VoicePlugin({ speaker, stt: new FakeStt(() => heard('tell me a story')), tts: new FakeTts(), wake: null });
  const { kernel, provider, states, waitFor } = await kernelWith((k) => {
    k.use(new AssistantStatePlugin());
    k.use(voice);
  });
  provider.enqueue({ content: 'Once upon a time. There was a box.' });
  const out = await voice.feedUtterance(pad(loadRecording('turn on Standing Light.wav'), 600, 1500, -60).pcm);
  await speaker.waitForPlays(1);
  await waitFor('speaking');
  kernel.agent.stop('button');
  await waitFor('idle');
  await out.done;
  assert.deepEqual(states, ['listening', 'thinking', 'speaking', 'idle']);
  assert.equal(speaker.played[0]!.completed, false, 'cut mid-sentence');
});
