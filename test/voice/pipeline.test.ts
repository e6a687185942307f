import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { ANSWER_WINDOW_MS, VoicePlugin, type VoicePluginDeps } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { Cap } from '../../src/kernel/output-types.js';
import { FakeSdk, type FakeAgent, type FakeInput } from '../support/fake-sdk.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard, rejected } from './fakes.js';
import { loadRecording, noise, pad, tone } from './helpers.js';
import { startWyomingTestServer, type WyomingTestServer } from '../support/wyoming-test-server.js';
import { WyomingAsr } from '../../src/voice/stt/wyoming-asr.js';
import { WyomingWake } from '../../src/voice/wyoming/wake-client.js';
import { EspeakTts } from '../../src/voice/tts/espeak.js';
import type { SttResult } from '../../src/voice/stt/types.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const utterance = (name = 'turn on Standing Light.wav') => pad(loadRecording(name), 600, 1500, -60).pcm;

async function setup(o: { settings?: Record<string, unknown>; stt?: FakeStt; deps?: Partial<VoicePluginDeps> } = {}) {
  const sdk = new FakeSdk({ name: 'voice', settings: { 'plugin.voice.no_speech_timeout_ms': 3000, ...o.settings } });
  const mic = new FakeMic();
  const speaker = new FakeSpeaker();
  const tts = new FakeTts();
  const stt = o.stt ?? new FakeStt(() => heard('turn on standing light'));
  const plugin = new VoicePlugin({ microphone: mic, speaker, stt, tts, wake: null, ...o.deps });
  // the state machine follows the pipeline's activity on the same bus (as in the service)
  const states = new AssistantStatePlugin();
  states.start(sdk);
  await plugin.start(sdk);
  cleanups.push(() => plugin.stop(), () => states.stop());
  return { sdk, mic, speaker, tts, stt, plugin, states };
}

/** Agent answer: sentences streamed to the speaker channel, then 'end'. */
async function streamReply(sdk: FakeSdk, input: FakeInput, sentences: string[], meta: Record<string, unknown> = {}): Promise<string> {
  for (const s of sentences) await sdk.deliver('speaker', { kind: 'sentence', content: s, input_id: input.id });
  const all = sentences.join(' ');
  await sdk.deliver('speaker', { kind: 'end', content: all, input_id: input.id, meta });
  return all;
}

/** Resolves once `state` was published `nth` times (an event wait); after 60 s it fails with the states seen (a failure deadline only). */
function waitState(sdk: FakeSdk, state: string, nth = 1): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`state ${state} x${nth} never came; states: ${sdk.states.join(' ')}`)), 60_000);
    timer.unref();
  });
  return Promise.race([sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === state, nth), deadline]).finally(() => clearTimeout(timer));
}

test('registers the speaker channel (text, audio, stream), expect_reply and plugin.voice settings', async () => {
  const { sdk } = await setup();
  assert.equal(sdk.channels.get('speaker')!.caps, Cap.Text | Cap.Audio | Cap.Stream);
  assert.ok(sdk.tools.has('expect_reply'));
  assert.equal(sdk.settings().get('plugin.voice.silence_ms'), 800);
  assert.equal(sdk.settings().get('plugin.voice.message_not_understood_zh'), '抱歉，我没听清。');
});

test('an utterance is endpointed, decoded, injected with meta, and the reply is spoken sentence by sentence', async () => {
  const { sdk, speaker, stt, plugin } = await setup();
  sdk.agent = (input) => streamReply(sdk, input, ['The Standing Light is on.', 'Anything else?']);
  const pcm = utterance();
  const out = await plugin.feedUtterance(pcm);
  assert.equal(out.status, 'injected');
  assert.equal(out.text, 'turn on standing light');
  const timings = await out.done;
  assert.equal(sdk.inputs.length, 1);
  const input = sdk.inputs[0]!;
  assert.equal(input.channel, 'speaker');
  assert.equal(input.text, 'turn on standing light');
  assert.equal(input.meta!.utterance_id, out.utterance_id);
  assert.deepEqual(input.meta!.stt, { engine: 'fake', confidence: 0.9 });
  assert.deepEqual(speaker.texts, ['The Standing Light is on.', 'Anything else?']);
  // the STT got the speech (with pre-roll) but not the whole padded file: the end was found in the audio
  const got = stt.utterances[0]!.length;
  assert.ok(got >= loadRecording('turn on Standing Light.wav').length * 0.5 && got < pcm.length, `${got} of ${pcm.length}`);
  assert.equal(timings.end_reason, 'silence');
  assert.ok(timings.transcript_ms !== undefined && timings.transcript_ms >= 0);
  assert.ok(timings.first_audio_ms !== undefined && timings.first_audio_ms >= timings.transcript_ms);
  assert.deepEqual(plugin.lastTimings, timings);
  await waitState(sdk, 'idle');
  assert.deepEqual(sdk.states, ['listening', 'thinking', 'speaking', 'idle']);
});

test('the first sentence is handed to the speaker while the model is still writing', async () => {
  const { sdk, speaker, plugin } = await setup();
  const order: string[] = [];
  speaker.onPlay = (p) => order.push(`play:${p.text}`);
  sdk.agent = async (input) => {
    await sdk.deliver('speaker', { kind: 'sentence', content: 'First sentence.', input_id: input.id });
    order.push('model:first-sent');
    await speaker.waitForPlays(1); // the model keeps writing only after the speaker got sentence one
    order.push('model:writing-rest');
    await sdk.deliver('speaker', { kind: 'sentence', content: 'Second sentence.', input_id: input.id });
    await sdk.deliver('speaker', { kind: 'end', content: 'First sentence. Second sentence.', input_id: input.id });
    order.push('model:end');
    return 'First sentence. Second sentence.';
  };
  await (await plugin.feedUtterance(utterance())).done;
  const at = (e: string) => order.indexOf(e);
  assert.ok(at('play:First sentence.') >= 0 && at('play:First sentence.') < at('model:writing-rest'), order.join(', '));
  assert.ok(at('play:First sentence.') < at('model:end'));
  assert.ok(at('play:Second sentence.') > at('play:First sentence.'));
});

test('stop cuts the speaker mid-sentence and drops queued speech', async () => {
  const { sdk, speaker, tts, plugin, states } = await setup();
  speaker.hold = true;
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  tts.gate = (text) => (text.startsWith('First') ? Promise.resolve() : gate);
  let reply!: FakeInput;
  sdk.agent = async (input) => {
    reply = input;
    for (const s of ['First of three.', 'Second of three.', 'Third of three.']) await sdk.deliver('speaker', { kind: 'sentence', content: s, input_id: input.id });
    return '';
  };
  const out = await plugin.feedUtterance(utterance());
  await speaker.waitForPlays(1);
  assert.equal(speaker.played[0]!.completed, undefined, 'still playing');
  sdk.publish('stop', { source: 'button', cancelled_inputs: 0 });
  await waitState(sdk, 'idle');
  openGate(); // the other sentences finish synthesising after the stop
  await sdk.deliver('speaker', { kind: 'sentence', content: 'Late sentence.', input_id: reply.id });
  await out.done;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(speaker.stops >= 1, true);
  assert.deepEqual(speaker.texts, ['First of three.']);
  assert.equal(speaker.played[0]!.completed, false, 'cut mid-sentence');
  assert.equal(states.state, 'idle');
});

test('stop while the recogniser is still decoding after the end of speech: the utterance is dropped, nothing is injected or done', async () => {
  let release!: () => void;
  const decoding = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const decodeStarted = new Promise<void>((r) => (started = r));
  // A slow final pass: end() waits until released (as pocketsphinx does on a long utterance).
  const stt = new FakeStt(async () => {
    started();
    await decoding;
    return heard('turn on standing light');
  });
  const { sdk, plugin } = await setup({ stt });
  const out = plugin.feedUtterance(utterance());
  await decodeStarted;
  sdk.publish('stop', { source: 'button', cancelled_inputs: 0 });
  const o = await out;
  release();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(o.status, 'cancelled');
  assert.equal(stt.aborted, 1, 'the STT session was aborted, its decoders end');
  assert.equal(sdk.inputs.length, 0, 'the command that was being decoded is not carried out');
});

test("a rejected utterance gets a spoken \"Sorry, I didn't catch that.\" and nothing is injected", async () => {
  const { sdk, speaker, plugin } = await setup({ stt: new FakeStt(() => rejected()) });
  const out = await plugin.feedUtterance(utterance('oov_3.wav'));
  assert.equal(out.status, 'rejected');
  const t = await out.done;
  assert.deepEqual(speaker.texts, ["Sorry, I didn't catch that."]);
  assert.equal(sdk.inputs.length, 0);
  assert.ok(t.first_audio_ms !== undefined);
  await waitState(sdk, 'idle');
});

test('in Chinese the message is 抱歉，我没听清。 and goes to the Mandarin voice; STT failures are not silent either', async () => {
  const stt = new FakeStt(() => {
    throw new Error('engine crashed');
  });
  const { speaker, tts, plugin } = await setup({ stt, settings: { 'plugin.voice.language': 'zh' } });
  const out = await plugin.feedUtterance(utterance());
  assert.equal(out.status, 'error');
  await out.done;
  assert.deepEqual(speaker.texts, ['抱歉，我没听清。']);
  assert.equal(tts.calls[0]!.language, 'zh');
});

test('listening on noise only ends at the no-speech timeout with the spoken message', async () => {
  const { mic, speaker, stt, plugin } = await setup({ settings: { 'plugin.voice.no_speech_timeout_ms': 1500 } });
  const out = await plugin.listenOnce();
  assert.equal(out.status, 'no_speech');
  assert.equal(out.timings.end_reason, 'no_speech');
  await out.done;
  assert.deepEqual(speaker.texts, ["Sorry, I didn't catch that."]);
  assert.equal(stt.utterances.length, 0);
  assert.equal(mic.running, false, 'microphone closed after the utterance');
});

test('push-to-talk: press listens through the microphone, the transcript is injected', async () => {
  const { sdk, mic, plugin } = await setup();
  sdk.agent = (input) => streamReply(sdk, input, ['Done.']);
  const outcome = new Promise<string>((resolve) => plugin.onTimings((t) => resolve(t.trigger)));
  sdk.publish('plugin.gpio.ptt', { pressed: true });
  await waitState(sdk, 'listening');
  await mic.say(utterance());
  sdk.publish('plugin.gpio.ptt', { pressed: false });
  assert.equal(await outcome, 'ptt');
  assert.equal(sdk.inputs[0]!.text, 'turn on standing light');
  assert.equal(sdk.inputs[0]!.meta!.trigger, 'ptt');
});

test('follow-up: after expect_reply the box listens again without wake word or button', async () => {
  let n = 0;
  const stt = new FakeStt(() => heard(++n === 1 ? 'turn on the light' : 'the kitchen'));
  const { sdk, mic, speaker, plugin } = await setup({ stt });
  sdk.agent = async (input) => {
    if (input.text === 'turn on the light') {
      assert.match(String((await sdk.callTool('expect_reply', {}, { input })).result), /ok/);
      return streamReply(sdk, input, ['Which room?']);
    }
    return streamReply(sdk, input, ['The kitchen light is on.']);
  };
  const firstP = plugin.listenOnce();
  await waitState(sdk, 'listening');
  await mic.say(utterance());
  await (await firstP).done;
  await waitState(sdk, 'listening', 2); // listening again by itself
  await mic.say(utterance('turn off lights in the Office.wav'));
  await waitState(sdk, 'idle');
  assert.deepEqual(sdk.states, ['listening', 'thinking', 'speaking', 'listening', 'thinking', 'speaking', 'idle']);
  assert.deepEqual(sdk.inputs.map((i) => [i.text, i.meta!.trigger]), [['turn on the light', 'cli'], ['the kitchen', 'followup']]);
  assert.deepEqual(speaker.texts, ['Which room?', 'The kitchen light is on.']);
});

test('follow-up through the expects_reply meta flag; silence then ends quietly (no "didn\'t catch that")', async () => {
  const { sdk, speaker, stt, plugin, states } = await setup({ settings: { 'plugin.voice.followup_ms': 1000 } });
  sdk.agent = (input) => streamReply(sdk, input, ['Do you want the heating on?'], { expects_reply: true });
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'listening', 2);
  await waitState(sdk, 'idle', 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(states.state, 'idle');
  assert.deepEqual(sdk.states, ['listening', 'thinking', 'speaking', 'listening', 'idle']);
  assert.deepEqual(speaker.texts, ['Do you want the heating on?']);
  assert.equal(stt.utterances.length, 1);
  assert.equal(sdk.inputs.length, 1);
});

/** An agent whose turn asks whether to unlock (meta.confirmation) and waits for the spoken yes or no. */
function unlockAsking(sdk: FakeSdk): FakeAgent {
  return async (input) => {
    const answer = sdk.awaitInput({ channel: 'speaker', timeout_ms: 10000, accept: (t) => t === 'yes' || t === 'no' });
    await sdk.sendOutput('speaker', 'Do you really want to unlock the Front Door?', { confirmation: true });
    const got = await answer;
    return streamReply(sdk, input, [got?.text === 'yes' ? 'The Front Door is unlocked.' : 'I left it locked.']);
  };
}

test('a confirmation question (meta.confirmation) mid-turn: the box listens and the yes reaches the waiting turn', async () => {
  let n = 0;
  const stt = new FakeStt(() => heard(++n === 1 ? 'unlock the front door' : 'yes'));
  const { sdk, mic, speaker, plugin } = await setup({ stt });
  sdk.agent = unlockAsking(sdk);
  const first = await plugin.feedUtterance(utterance());
  await waitState(sdk, 'waiting_for_answer'); // the box listens for the yes/no (its own LED pattern)
  await mic.say(utterance('next.wav'));
  await first.done;
  await waitState(sdk, 'idle');
  assert.deepEqual(sdk.states, ['listening', 'thinking', 'speaking', 'waiting_for_answer', 'thinking', 'speaking', 'idle']);
  assert.deepEqual(speaker.texts, ['Do you really want to unlock the Front Door?', 'The Front Door is unlocked.']);
  assert.deepEqual(sdk.inputs.map((i) => [i.text, i.meta!.trigger, i.level]), [['unlock the front door', 'feed', 0], ['yes', 'followup', 0]]);
  // The answer grammar and, beside it on the same audio, the command grammar (capture.ts answerOrCommand); the yes is
  // heard, so the command decode is dropped without a result.
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, true, false], 'the answer is decoded with the answer grammar');
  assert.equal(stt.utterances.length, 2, 'the command decode beside the answer is dropped once the yes is heard');
});

test('a question settled elsewhere (answered, timed out, dropped) ends the listening for its answer when nothing was said yet: the box does not stay in waiting_for_answer', async () => {
  // A microphone that sends nothing (the simulated one with nobody feeding it): no silence ever ends the listening.
  let live: Readable | undefined;
  const silent = { start: () => (live = new Readable({ read: () => undefined })), stop: () => void live?.push(null) };
  const stt = new FakeStt(() => heard('unlock the front door'));
  const { sdk, plugin } = await setup({ stt, deps: { microphone: silent } });
  sdk.agent = (input) => streamReply(sdk, input, ['Do you really want to unlock the Front Door? Please say yes or no.'], { confirmation: true });
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'waiting_for_answer');
  const before = sdk.states.length;
  sdk.publish('plugin.home.decision', { who: 'voice', what: 'unlock Front Door', decision: 'timeout', by: 'timer', channel: 'speaker', at: Date.now() });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    sdk.waitForPublished('assistant_state', () => sdk.states.length > before && sdk.states.at(-1) === 'idle'),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`still ${sdk.states.at(-1)} 5 s after the question was settled`)), 5000))),
  ]).finally(() => clearTimeout(timer));
  assert.deepEqual(sdk.states.slice(before), ['idle'], sdk.states.join(' '));
  assert.equal(stt.utterances.length, 1, 'nothing was decoded for the dropped listening');
});

test('a confirmation question heard neither as yes nor no: the box says so, asks for a yes or no and listens for it again', async () => {
  // The answer grammar rejects the first answer and hears "yes" in the second; the command grammar, which decodes the
  // rejected answer again (capture.ts answerOrCommand), hears no command in it either.
  let answers = 0;
  const stt: FakeStt = new FakeStt((_pcm, _lang, o) => (o?.answer ? (++answers === 1 ? rejected() : heard('yes')) : stt.starts.length === 1 ? heard('unlock the front door') : rejected()));
  const { sdk, mic, speaker, plugin } = await setup({ stt });
  sdk.agent = unlockAsking(sdk);
  const first = await plugin.feedUtterance(utterance());
  await waitState(sdk, 'waiting_for_answer');
  await mic.say(utterance('next.wav')); // "turn on the tv", say: not an answer
  await waitState(sdk, 'waiting_for_answer', 2);
  await mic.say(utterance('next.wav'));
  await first.done;
  await waitState(sdk, 'idle');
  assert.deepEqual(speaker.texts, ['Do you really want to unlock the Front Door?', "Sorry, I didn't catch that. Please say yes or no.", 'The Front Door is unlocked.']);
  // Each question spoken, the first and the "Please say yes or no.", starts the time to answer (home's ConfirmationGate).
  assert.deepEqual(sdk.events('plugin.voice.question_spoken'), [{ channel: 'speaker' }, { channel: 'speaker' }]);
  assert.deepEqual(sdk.inputs.map((i) => [i.text, i.meta!.trigger]), [['unlock the front door', 'feed'], ['yes', 'followup']]);
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, true, false, true, false], 'both tries are decoded with the answer grammar (the command grammar beside it)');
  assert.equal(stt.utterances.length, 4, 'the rejected try is decoded with the command grammar too; the yes is not');
});

test('while a question waits, speech the answer grammar places nowhere is decoded again with the command grammar: a question that changes nothing is answered and the question is off; a command that acts is not taken', async () => {
  // The real recordings' "timer status" after "Do you really want to turn on ...?" was "Please say yes or no." while
  // the answer grammar alone decoded it (test/bench/voice.ts). A command that acts is never taken under a question:
  // a tester's "hold on" became "turn mood on" in the command grammar.
  const intent = (text: string, name: string): SttResult => ({ ...heard(text), intent: { intent: name, slots: {}, text, language: 'en' } });
  const said = [intent('unlock the front door', 'HassTurnOff'), intent('turn mood on', 'HassTurnOn'), intent('timer status', 'HassTimerStatus'), intent('turn on the tv', 'HassTurnOn')];
  let k = 0;
  const stt = new FakeStt((_pcm, _lang, o) => (o?.answer ? rejected() : said[k++]!));
  const { sdk, speaker, plugin } = await setup({ stt, deps: { microphone: undefined } });
  sdk.agent = (input) =>
    input.text === 'unlock the front door'
      ? streamReply(sdk, input, ['Do you really want to unlock the Front Door? Please say yes or no.'], { confirmation: true })
      : streamReply(sdk, input, ['Done.']);
  for (let i = 0; i < said.length; i++) {
    await (await plugin.feedUtterance(utterance())).done;
    await waitState(sdk, 'idle', i + 1);
  }
  assert.deepEqual(sdk.inputs.map((i) => i.text), ['unlock the front door', 'timer status', 'turn on the tv']);
  assert.deepEqual(speaker.texts, ['Do you really want to unlock the Front Door? Please say yes or no.', "Sorry, I didn't catch that. Please say yes or no.", 'Done.', 'Done.']);
  // The answer grammar first, then the command grammar on the same audio; after the question is off, the command grammar alone.
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, true, false, true, false, false]);
  assert.equal(stt.utterances[1]!.length, stt.utterances[2]!.length, 'the command grammar decodes the same audio');
});

test('a fed file with no speech while a question waits gets the yes/no reminder too: the question is still open', async () => {
  const stt = new FakeStt(() => heard('unlock the front door'));
  const { sdk, speaker, plugin } = await setup({ stt, deps: { microphone: undefined } });
  sdk.agent = (input) => streamReply(sdk, input, ['Do you really want to unlock the Front Door? Please say yes or no.'], { confirmation: true });
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'idle', 1);
  const silent = await plugin.feedUtterance(noise(4000, -60));
  await silent.done;
  assert.equal(silent.status, 'no_speech');
  assert.deepEqual(speaker.texts, ['Do you really want to unlock the Front Door? Please say yes or no.', "Sorry, I didn't catch that. Please say yes or no."]);
});

test('a command heard with the command grammar and rejected is the plain "didn\'t catch that", with no yes/no reminder and no listening after it', async () => {
  const stt = new FakeStt(() => ({ ...rejected(), reason: 'not_command', heard: 'i turn off the tv' }));
  const { sdk, speaker, plugin } = await setup({ stt });
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'idle');
  assert.deepEqual(speaker.texts, ["Sorry, I didn't catch that."]);
  assert.equal(stt.starts.length, 1);
  // On the bus for `homeagent logs`: what was heard and the rule that refused it (a tester found no line for it).
  assert.deepEqual(sdk.events('plugin.voice.not_understood'), [{ heard: 'i turn off the tv', reason: 'not_command', said: "Sorry, I didn't catch that.", answering: false }]);
});

/** A box whose recogniser hears `said` in turn, with no microphone: "unlock the front door" asks for a yes, anything else is "Done.". */
async function unlockRig(said: string[]) {
  let n = 0;
  const stt = new FakeStt(() => heard(said[n++]!));
  const rig = await setup({ stt, deps: { microphone: undefined } });
  rig.sdk.agent = (input) =>
    input.text === 'unlock the front door'
      ? streamReply(rig.sdk, input, ['Do you really want to unlock the Front Door? Please say yes or no.'], { confirmation: true })
      : streamReply(rig.sdk, input, ['Done.']);
  return { ...rig, stt };
}

test('a confirmation asked as a turn\'s reply: the next utterance, even a fed file, is heard with the answer grammar; once answered, commands again', async () => {
  const said = ['unlock the front door', 'yes', 'turn on the tv'];
  const { sdk, plugin, stt } = await unlockRig(said);
  for (let i = 0; i < said.length; i++) {
    await (await plugin.feedUtterance(utterance())).done;
    await waitState(sdk, 'idle', i + 1);
  }
  // The answer grammar with the command grammar beside it (capture.ts answerOrCommand), then the command grammar alone.
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, true, false, false]);
  assert.deepEqual(sdk.inputs.map((i) => i.text), said);
});

test('while a confirmation waits, something else the box says (a timer ringing) leaves the answer grammar on: the yes after it is heard as an answer', async () => {
  const said = ['unlock the front door', 'yes'];
  const { sdk, plugin, stt } = await unlockRig(said);
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'idle', 1);
  // A newcomer's timer went off here; the "yes" after it was decoded with the command grammar and refused.
  await sdk.deliver('speaker', { kind: 'full', content: 'Your timer for 5 seconds is done.', input_id: 'announcement-1', meta: {} });
  await (await plugin.feedUtterance(utterance())).done;
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, true, false]);
  assert.deepEqual(sdk.inputs.map((i) => i.text), said);
});

test('an unanswered confirmation does not leave the box deaf to commands: its end (plugin.home.decision) or ANSWER_WINDOW_MS brings the command grammar back', async () => {
  let now = 0;
  const stt = new FakeStt(() => heard('unlock the front door'));
  const { sdk, plugin } = await setup({ stt, deps: { microphone: undefined, now: () => now } });
  sdk.agent = (input) => streamReply(sdk, input, ['Do you really want to unlock the Front Door? Please say yes or no.'], { confirmation: true });
  let k = 0;
  const feedOne = async (): Promise<void> => {
    await (await plugin.feedUtterance(utterance())).done;
    await waitState(sdk, 'idle', ++k);
  };
  await feedOne(); // asks
  sdk.publish('plugin.home.decision', { who: 'x', what: 'unlock Front Door', decision: 'timeout', by: 'timer', at: 0 });
  await feedOne(); // heard with the command grammar again (and asks again)
  now += ANSWER_WINDOW_MS - 1;
  await feedOne(); // still within the window of the second question: the answer grammar (and it asks a third time)
  now += ANSWER_WINDOW_MS;
  await feedOne(); // the third question's window has lapsed with no decision published
  assert.deepEqual(stt.starts.map((o) => o?.answer === true), [false, false, true, false, false]);
});

test('a question mark alone does not trigger follow-up listening', async () => {
  const { sdk, mic, plugin } = await setup();
  sdk.agent = (input) => streamReply(sdk, input, ['Is that all?']);
  await (await plugin.feedUtterance(utterance())).done;
  await waitState(sdk, 'idle');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(mic.starts, 0);
  assert.equal(sdk.states.filter((s) => s === 'listening').length, 1);
});

test('barge-in: the button during a reply cuts it, listens, and the old reply does not come back', async () => {
  let n = 0;
  const stt = new FakeStt(() => heard(++n === 1 ? 'tell me a story' : 'stop the story'));
  const { sdk, mic, speaker, plugin } = await setup({ stt });
  speaker.hold = true;
  let continueStory!: () => void;
  const storyGate = new Promise<void>((r) => (continueStory = r));
  sdk.agent = async (input) => {
    if (input.text === 'tell me a story') {
      await sdk.deliver('speaker', { kind: 'sentence', content: 'Once upon a time.', input_id: input.id });
      await storyGate; // the model is still writing
      await sdk.deliver('speaker', { kind: 'sentence', content: 'There was a box.', input_id: input.id });
      await sdk.deliver('speaker', { kind: 'end', content: 'Once upon a time. There was a box.', input_id: input.id });
      return '';
    }
    speaker.hold = false;
    return streamReply(sdk, input, ['Okay.']);
  };
  await plugin.feedUtterance(utterance());
  await speaker.waitForPlays(1);
  sdk.publish('plugin.gpio.ptt', { pressed: true });
  await waitState(sdk, 'listening', 2);
  assert.equal(speaker.played[0]!.completed, false, 'the reply was cut');
  await mic.say(utterance('pause.wav'));
  sdk.publish('plugin.gpio.ptt', { pressed: false });
  await speaker.waitForPlays(2);
  continueStory(); // the old turn goes on writing after the barge-in: none of it is spoken
  await new Promise((r) => setTimeout(r, 20));
  await waitState(sdk, 'idle');
  assert.deepEqual(speaker.texts, ['Once upon a time.', 'Okay.']);
  assert.equal(sdk.inputs[1]!.text, 'stop the story');
  assert.equal(sdk.inputs[1]!.level, 1, 'injected as an interrupt because the story turn was still running');
});

test('wake word from a Wyoming wake service starts listening; during a reply it barges in', async () => {
  const server: WyomingTestServer = await startWyomingTestServer();
  cleanups.push(() => server.close());
  const wake = new WyomingWake({ host: server.host, port: server.port, names: ['ok_nabu'] });
  const { sdk, mic, speaker } = await setup({ deps: { wake } });
  assert.equal(mic.running, true, 'the microphone runs for the wake word');
  speaker.hold = true;
  sdk.agent = (input) => streamReply(sdk, input, ['Here is a long answer.', 'It goes on.']);
  await mic.say(tone(200, -1)); // "ok nabu" (the test service detects a loud chunk)
  await waitState(sdk, 'listening');
  await mic.say(utterance());
  await speaker.waitForPlays(1);
  await mic.say(tone(200, -1)); // wake word again during the reply
  await waitState(sdk, 'listening', 2);
  assert.equal(speaker.played[0]!.completed, false);
  assert.ok(speaker.stops >= 1);
  const detects = server.received.flat().filter((e) => e.type === 'detect');
  assert.deepEqual(detects[0]!.data.names, ['ok_nabu']);
});

test('end to end: Wyoming ASR on a real recording and real espeak-ng speech to the speaker', async () => {
  const rec = loadRecording('what\'s the temperature.wav');
  const server = await startWyomingTestServer({
    transcribe: (req) => (req.pcm.length > rec.length * 0.5 ? "What's the temperature?" : ''),
  });
  cleanups.push(() => server.close());
  const sdk = new FakeSdk();
  const speaker = new FakeSpeaker();
  const plugin = new VoicePlugin({ speaker, stt: new WyomingAsr({ host: server.host, port: server.port }), tts: new EspeakTts(), wake: null });
  await plugin.start(sdk);
  cleanups.push(() => plugin.stop());
  sdk.agent = (input) => streamReply(sdk, input, ['It is 21.5 degrees.']);
  const out = await plugin.feedUtterance(pad(rec, 500, 2000, -60).pcm);
  assert.equal(out.text, "what's the temperature");
  const t = await out.done;
  assert.equal(speaker.played.length, 1);
  assert.equal(speaker.played[0]!.sampleRate, 22050);
  assert.ok(speaker.played[0]!.bytes > 22050, 'about a second of speech');
  assert.ok(t.first_audio_ms! >= t.transcript_ms!);
});

test("a whole ('full') message from another plugin is spoken; markdown and emoji are not read out", async () => {
  const { sdk, speaker } = await setup();
  await sdk.sendOutput('speaker', '**Timer** done! 🎉 Your tea is ready.');
  await speaker.waitForPlays(2);
  assert.deepEqual(speaker.texts, ['Timer done!', 'Your tea is ready.']);
});

test('a recording fed while the microphone listens (a follow-up question open) is heard whole: the microphone closing does not end it', async () => {
  const { sdk, plugin, mic } = await setup();
  sdk.agent = (input) => streamReply(sdk, input, ['Done.']);
  // The microphone listens (as after "Which timer do you mean?"); then `homeagent listen` feeds a recording.
  const listening = plugin.listenOnce();
  await waitState(sdk, 'listening');
  assert.ok(mic.running);
  const out = await plugin.feedUtterance(utterance());
  assert.equal((await listening).status, 'cancelled', 'the microphone capture gave way to the recording');
  assert.equal(out.status, 'injected', `the recording was heard (${out.status})`);
  assert.equal(out.text, 'turn on standing light');
  assert.equal(out.timings.end_reason, 'silence', 'ended by its own silence, not by the microphone closing');
});
