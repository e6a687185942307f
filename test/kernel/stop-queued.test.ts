/**
 * Stop reaches everything queued (issue 13): a local device command or timer
 * that was queued when stop was pressed acts in no stage — no MQTT publish,
 * no tool, no timer — and its client is told `cancelled`; a running turn
 * stopped while its on_input handler still matches does not act either.
 * Against a real Mosquitto with the fixture home's device simulator; the
 * HomePlugin runs on a real kernel. "Nothing arrived" is shown with a
 * barrier, not a sleep: a command given after the stop goes through the same
 * MQTT client, so once it reaches the broker every earlier publish would
 * have reached it before.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { HomePlugin } from '../../src/home/index.js';
import type { IntentMatch, Vocabulary } from '../../src/intents/types.js';
import { TimersPlugin } from '../../src/plugins/timers/index.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { DeviceSimulator } from '../support/device-simulator.js';
import { startHarness, type Harness } from '../support/kernel-harness.js';
import { deferred } from '../support/fake-provider.js';
import { stubMatcher } from '../home/stub-matcher.js';
import { FIXTURE_ENTITIES, waitFor } from '../home/harness.js';

// Unset until before() got that far (after() stops only what was started).
let broker!: MosquittoBroker;
let sim!: DeviceSimulator;
let h!: Harness;
const timers = new TimersPlugin();
/** When set, the matcher waits on it (a slow recogniser) and reports that it was called. */
let matcherGate: { called: () => void; release: Promise<void> } | undefined;
const homeCommands: Array<{ topic: string; payload: string }> = [];

async function matcher(text: string, v: Vocabulary, lang?: 'en' | 'zh'): Promise<IntentMatch | null> {
  const g = matcherGate;
  if (g) {
    g.called();
    await g.release;
  }
  return stubMatcher(text, v, lang);
}

before(async () => {
  broker = await startMosquitto();
  sim = new DeviceSimulator(broker.url);
  await sim.start();
  const home = new HomePlugin({ matchIntent: matcher, timers, mqtt: { reconnectMinMs: 100 } });
  h = await startHarness({ env: { HOMEAGENT__PLUGIN__MQTT__URL: broker.url }, beforeStart: (k) => k.use(timers).use(home) });
  h.kernel.bus.subscribe('_test_', 'plugin.home.command', (p) => void homeCommands.push(p as { topic: string; payload: string }));
  await waitFor(() => (home.registry?.entities().length ?? 0) >= FIXTURE_ENTITIES && home.connected, 'the fixture home to be discovered');
  await waitFor(() => home.registry?.view('bed_light')?.available === true && home.registry?.view('kitchen_light')?.state.state !== undefined, 'fixture states');
});

// Safe when before() failed part way (a missing fixture): what was started is stopped, so no broker is left behind.
after(async () => {
  await (h as Harness | undefined)?.close();
  await (sim as DeviceSimulator | undefined)?.stop();
  await (broker as MosquittoBroker | undefined)?.stop();
});

beforeEach(() => {
  sim.clear();
  homeCommands.length = 0;
  matcherGate = undefined;
});

/** Give a command after the stop and wait until it reaches the broker: every earlier publish of the box would be there already. */
async function barrier(): Promise<void> {
  const r = await h.kernel.injectInput('test', 'console', 'turn off the bed light');
  assert.equal(r.status, 'short_circuit', 'a command given after the stop runs');
  await sim.waitForCommands(1);
}

test('stop: device commands and a timer queued at that moment are never sent or started', async () => {
  const gate = deferred();
  h.provider.enqueue({ content: 'Once upon a time. ', pieces: ['Once upon a time. '], gate: gate.promise });
  try {
    const running = h.kernel.injectInput('test', 'speaker', 'tell me a story');
    await h.provider.waitForRequests(h.provider.requests.length + 1);
    const queued = [
      h.kernel.injectInput('test', 'console', 'turn on the kitchen light'),
      h.kernel.injectInput('test', 'console', 'turn on office/desk lamp'),
      h.kernel.injectInput('test', 'console', 'set a timer for 2 minutes'),
    ];
    await new Promise((r) => setImmediate(r)); // pumped into the scheduler
    queued.push(h.kernel.injectInput('test', 'console', 'turn on the living room light')); // still in the inbox
    assert.equal(h.kernel.agent.stats().inbox, 1);
    assert.equal(h.kernel.stopNow('button'), 4);
    assert.equal((await running).status, 'interrupted');
    for (const q of queued) assert.equal((await q).status, 'cancelled');
    await barrier();
    assert.equal(sim.commands.length, 1, `no queued command reached the broker: ${JSON.stringify(sim.commands)}`);
    assert.deepEqual(homeCommands.map((c) => c.topic), [sim.commands[0]!.topic], 'the box sent one command: the one after the stop');
    assert.equal(timers.service?.status().length ?? 0, 0, 'no timer was started');
  } finally {
    gate.resolve();
  }
});

test('stop while the running turn still matches its command: nothing is sent', async () => {
  const called = deferred();
  const release = deferred();
  matcherGate = { called: () => called.resolve(), release: release.promise };
  const turn = h.kernel.injectInput('test', 'console', 'turn on the kitchen light');
  await called.promise;
  matcherGate = undefined;
  h.kernel.stopNow('button');
  release.resolve();
  const r = await turn;
  assert.equal(r.status, 'interrupted');
  assert.equal(r.reply, '');
  await barrier();
  assert.equal(sim.commands.length, 1, `the stopped command never reached the broker: ${JSON.stringify(sim.commands)}`);
  assert.ok(!h.outputs.some((o) => o.input_id === r.input_id && o.content), 'the stopped turn said nothing');
});

test('a queued command whose caller has gone is dropped at once and never sent; one already under way still acts', async () => {
  // A tester's `ask` for a device command waited behind a hung LLM turn, its client gave up, and the light
  // switched on two minutes later for nobody (InjectOptions.signal).
  const gate = deferred();
  h.provider.enqueue({ content: 'Once upon a time. ', pieces: ['Once upon a time. '], gate: gate.promise });
  try {
    const running = h.kernel.injectInput('test', 'speaker', 'tell me a story');
    await h.provider.waitForRequests(h.provider.requests.length + 1);
    const gone = new AbortController();
    const inInbox = new AbortController();
    const stays = new AbortController();
    const queued = h.kernel.injectInput('test', 'console', 'turn on the kitchen lights', { signal: gone.signal });
    const kept = h.kernel.injectInput('test', 'console', 'turn on office/desk lamp', { signal: stays.signal });
    await new Promise((r) => setImmediate(r)); // pumped into the scheduler
    const fresh = h.kernel.injectInput('test', 'console', 'turn on the lights in the living room', { signal: inInbox.signal });
    gone.abort();
    inInbox.abort();
    // Both end now, while the story still holds the box.
    assert.equal((await queued).status, 'cancelled');
    assert.equal((await fresh).status, 'cancelled');
    assert.equal(h.kernel.agent.pendingInputs(), 1, 'only the command whose caller still waits is queued');
    gate.resolve();
    assert.equal((await running).status, 'done');
    const k = await kept;
    assert.equal(k.status, 'short_circuit', 'the command whose caller still waits runs');
    stays.abort(); // its caller leaving after it ran changes nothing
    await sim.waitForCommands(1);
    await barrier();
    await sim.waitForCommands(2);
    const topics = sim.commands.map((c) => c.topic);
    assert.equal(topics.length, 2, `only the kept command and the barrier reached the broker: ${JSON.stringify(topics)}`);
    assert.match(topics[0]!, /desk/i, `the first command is the kept one: ${JSON.stringify(topics)}`);
  } finally {
    gate.resolve();
  }
});

test('a caller that leaves once its turn has begun does not undo it', async () => {
  const called = deferred();
  const release = deferred();
  matcherGate = { called: () => called.resolve(), release: release.promise };
  const leaving = new AbortController();
  const turn = h.kernel.injectInput('test', 'console', 'turn on the kitchen lights', { signal: leaving.signal });
  await called.promise;
  matcherGate = undefined;
  leaving.abort();
  release.resolve();
  const r = await turn;
  assert.equal(r.status, 'short_circuit', JSON.stringify(r));
  await sim.waitForCommands(1);
  assert.equal(homeCommands.length, 1, 'its command was sent');
});
