/**
 * Benchmark of the pipeline alone (fake kernel, instant STT; `npm run bench -- voice` runs the real service): time from the end of speech to the first audio sample handed
 * to the speaker (issue 7 "Benchmark"), over the real recordings padded with
 * room noise, through the real espeak-ng TTS.
 * - voice_pipeline.first_audio_command: device-command path; the agent answers at
 *   once with one sentence (a fake kernel here; the lead rewires it through
 *   the real kernel and local intents).
 * - voice_pipeline.first_audio_llm: LLM path; the reply streams at 20 tokens/s and
 *   is cut into sentences as it arrives (SentenceSplitter), as the kernel
 *   does for stream channels.
 * The reference point is the endpointer's decision (silence_ms after the
 * last speech frame). STT here is an instant engine returning the
 * transcript from expected.json, so these figures are pipeline + TTS only;
 * `voice.stt_rtf` (test/bench/voice-stt.ts) covers recognition.
 * Prints medians in ms. `measureFirstAudio` is reusable with any pipeline.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { VoicePlugin, type UtteranceTimings } from '../../src/voice/pipeline.js';
import type { Speaker } from '../../src/voice/speech-queue.js';
import type { SttEngine } from '../../src/voice/stt/types.js';
import { EspeakTts } from '../../src/voice/tts/espeak.js';
import { SentenceSplitter } from '../../src/kernel/sentences.js';
import { FakeSdk, type FakeInput } from '../support/fake-sdk.js';
import { fixturesDir, loadRecording, pad } from '../voice/helpers.js';

/** One utterance to measure: padded PCM (16 kHz mono s16le) and its transcript. */
export interface BenchUtterance {
  name: string;
  pcm: Buffer;
  transcript: string;
}

/**
 * Feed each utterance through `plugin.feedUtterance` and collect its timings
 * once the reply has been spoken. The plugin must be started and wired to a
 * kernel (or fake) that answers on the speaker channel.
 * @returns timings per utterance (first_audio_ms in ms from end of speech)
 */
export async function measureFirstAudio(plugin: VoicePlugin, utterances: BenchUtterance[]): Promise<UtteranceTimings[]> {
  const out: UtteranceTimings[] = [];
  for (const u of utterances) {
    const outcome = await plugin.feedUtterance(u.pcm);
    out.push(await outcome.done);
  }
  return out;
}

/** The median of `first_audio_ms` over timings that have one, ms. */
export function medianFirstAudio(timings: UtteranceTimings[]): number {
  const v = timings.map((t) => t.first_audio_ms).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** The fixture commands (not oov_*) padded with 600 ms / 1500 ms of noise at -60 dBFS. */
export function benchUtterances(): BenchUtterance[] {
  const expected = JSON.parse(readFileSync(path.join(fixturesDir, 'expected.json'), 'utf8')) as { expected: Record<string, { transcript: string | null }> };
  return Object.entries(expected.expected)
    .filter(([, e]) => e.transcript !== null)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, e]) => ({ name, transcript: e.transcript!, pcm: pad(loadRecording(name), 600, 1500, -60).pcm }));
}

/** An STT engine that answers instantly with the transcript of the utterance of that length. */
function instantStt(utterances: BenchUtterance[]): SttEngine {
  let next = 0;
  return {
    name: 'instant',
    start: () => {
      const u = utterances[next++ % utterances.length]!;
      return {
        write: () => undefined,
        end: async () => ({ text: u.transcript, confidence: 1, rejected: false, engine: 'instant', finish_ms: 0 }),
        abort: () => undefined,
      };
    },
  };
}

/** A speaker that takes the audio and "plays" it at once (handover time is what is measured). */
const nullSpeaker: Speaker = {
  play: async () => ({ completed: true }),
  stop: async () => undefined,
};

async function pipelineWith(utterances: BenchUtterance[], agent: (input: FakeInput, sdk: FakeSdk) => Promise<string>): Promise<{ plugin: VoicePlugin; sdk: FakeSdk }> {
  const sdk = new FakeSdk();
  sdk.agent = agent;
  const plugin = new VoicePlugin({ speaker: nullSpeaker, stt: instantStt(utterances), tts: new EspeakTts(), wake: null });
  await plugin.start(sdk);
  return { plugin, sdk };
}

const COMMAND_REPLY = 'Done, the light is on.';
const LLM_REPLY =
  'The temperature in the living room is 21.5 degrees right now. It should stay about the same for the rest of the evening, so there is no need to turn on the heating.';

/** Stream `text` as word tokens at `tokensPerSecond`, delivering each finished sentence to the speaker channel. */
async function streamAtRate(sdk: FakeSdk, input: FakeInput, text: string, tokensPerSecond: number): Promise<string> {
  const splitter = new SentenceSplitter({ firstClause: true }); // core.output.first_clause's default
  const tokens = text.match(/\s*\S+/g) ?? [];
  for (const tok of tokens) {
    await new Promise((r) => setTimeout(r, 1000 / tokensPerSecond));
    for (const s of splitter.push(tok)) await sdk.deliver('speaker', { kind: 'sentence', content: s, input_id: input.id });
  }
  const last = splitter.flush();
  if (last) await sdk.deliver('speaker', { kind: 'sentence', content: last, input_id: input.id });
  await sdk.deliver('speaker', { kind: 'end', content: text, input_id: input.id });
  return text;
}

/** Print voice_pipeline.first_audio_command and voice_pipeline.first_audio_llm (medians, ms). */
export async function run(): Promise<void> {
  const utterances = benchUtterances();

  const cmd = await pipelineWith(utterances, async (input, sdk) => {
    await sdk.deliver('speaker', { kind: 'sentence', content: COMMAND_REPLY, input_id: input.id });
    await sdk.deliver('speaker', { kind: 'end', content: COMMAND_REPLY, input_id: input.id });
    return COMMAND_REPLY;
  });
  await measureFirstAudio(cmd.plugin, utterances.slice(0, 2)); // warm-up (espeak-ng data in the page cache)
  const cmdTimings = await measureFirstAudio(cmd.plugin, utterances);
  await cmd.plugin.stop();
  console.log(`voice_pipeline.first_audio_command: ${medianFirstAudio(cmdTimings).toFixed(1)} ms`);

  const llm = await pipelineWith(utterances, (input, sdk) => streamAtRate(sdk, input, LLM_REPLY, 20));
  const llmTimings = await measureFirstAudio(llm.plugin, utterances.slice(0, 6));
  await llm.plugin.stop();
  console.log(`voice_pipeline.first_audio_llm: ${medianFirstAudio(llmTimings).toFixed(1)} ms`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
