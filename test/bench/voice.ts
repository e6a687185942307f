/**
 * Benchmark (issue 7): the voice box over the real recordings, through the
 * whole service (see test/support/e2e-home.ts): real pocketsphinx with the
 * grammar from the discovered home, local intents, real Mosquitto, real
 * espeak-ng, simulated speaker.
 *  voice.effect_right        share of recordings with the right effect (expected.json)
 *  voice.wrong_action_rate   share of recordings after which the box did something not asked (e2e-home wrongActions)
 *  voice.exact_transcript    share of commands transcribed exactly
 *  voice.oov_rejected        share of out-of-vocabulary recordings rejected
 *  voice.stt_rtf             decoding time left after the end of the audio / audio length (audio fed at real-time pace, decoding while it arrives)
 *  voice.first_audio_command median ms from end of speech to the first reply audio handed to the speaker, device-command path
 *  voice.first_audio_llm     the same on the LLM path (local intents off; the test server streams at 20 tokens/s)
 *  voice.first_audio_command_p90  90th percentile of the command path
 *  voice.first_audio_command_from_last_sound  median ms from the last speech frame (the endpointer's silence wait, plugin.voice.silence_ms, included), and _p90
 *  voice.early_commits        commands acted on at their first pause (plugin.voice.early_commit, issue 15) instead of after the full silence
 *  voice.first_audio_command_from_last_sound.no_early_commit  the same median with plugin.voice.early_commit off, in the same run (the baseline), and the ratio
 * "End of speech" is the moment the endpointer decides the utterance is over
 * (pipeline UtteranceTimings.end_of_speech_at). Each recording is followed by
 * TRAILING_MS of quiet room noise, as a live microphone goes on after the
 * person stops, so the end is found in the audio (a file that simply ends
 * would give the recogniser no silence to work in).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { check, loadExpected, startE2E, VOICE_DIR, wrongActions } from '../support/e2e-home.js';

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * q))]! : NaN;
}

function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

const TRAILING_MS = 1500;

function audioSeconds(file: string): number {
  const b = readFileSync(path.join(VOICE_DIR, file));
  return (b.length - 44) / 32000;
}

export async function run(): Promise<void> {
  const expected = loadExpected();
  const files = Object.keys(expected);
  let right = 0;
  let wrong = 0;
  let exact = 0;
  let commands = 0;
  let oov = 0;
  let oovRejected = 0;
  let decode = 0;
  let audio = 0;
  const firstAudioCommand: number[] = [];
  const fromLastSound: number[] = [];
  let early = 0;
  const heard: string[] = [];
  // Voice settings to try without editing the defaults (e.g. HOMEAGENT__PLUGIN__VOICE__PAUSE_MS=300), in both runs.
  const voiceEnv = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('HOMEAGENT__PLUGIN__VOICE__') && e[1] !== undefined));
  if (Object.keys(voiceEnv).length > 0) console.log(`# voice settings from the environment: ${JSON.stringify(voiceEnv)}`);
  let box = await startE2E({ env: voiceEnv });
  try {
    for (const f of files) {
      const exp = expected[f]!;
      const o = await box.listen(f, true, TRAILING_MS);
      if (check(exp, o).length === 0) right++;
      const w = wrongActions(exp, o);
      if (w.length) {
        wrong++;
        heard.push(`# WRONG ACTION ${f}: ${w.join('; ')}`);
      }
      if (exp.transcript === null) {
        oov++;
        if (o.report.rejected) oovRejected++;
      } else {
        commands++;
        if (o.report.transcript === exp.transcript) exact++;
      }
      if (o.report.timings.stt_finish_ms !== undefined) {
        decode += o.report.timings.stt_finish_ms;
        audio += audioSeconds(f) * 1000;
      }
      const t = o.report.timings;
      if (t.first_audio_ms !== undefined && !o.report.rejected) {
        firstAudioCommand.push(t.first_audio_ms);
        fromLastSound.push(t.first_audio_ms + (t.endpoint_wait_ms ?? 0));
        if (o.report.end_reason === 'early') early++;
      }
      const ms = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(0));
      heard.push(
        `# ${f}: heard ${JSON.stringify(o.report.transcript)} -> ${JSON.stringify(o.report.reply)} (${o.report.end_reason ?? '-'}: wait ${ms(t.endpoint_wait_ms)}, transcript ${ms(t.transcript_ms)}, first audio ${ms(t.first_audio_ms)} ms)${o.report.then ? ` then ${JSON.stringify(o.report.then)}` : ''}`,
      );
    }
  } finally {
    await box.close();
  }
  // Baseline in the same run: the command recordings with the early commit off (the full silence always).
  const baseline: number[] = [];
  box = await startE2E({ env: { ...voiceEnv, HOMEAGENT__PLUGIN__VOICE__EARLY_COMMIT: 'false' } });
  try {
    for (const f of files.filter((x) => expected[x]!.transcript !== null)) {
      const o = await box.listen(f, true, TRAILING_MS);
      const t = o.report.timings;
      if (t.first_audio_ms !== undefined && !o.report.rejected) baseline.push(t.first_audio_ms + (t.endpoint_wait_ms ?? 0));
    }
  } finally {
    await box.close();
  }
  // LLM path: same recordings, local intents off, reply streamed at 20 tokens/s.
  const firstAudioLlm: number[] = [];
  box = await startE2E({ llmReply: { content: 'Sure, I can help with that right away. Is there anything else you need?', tokensPerSecond: 20 }, env: { HOMEAGENT__PLUGIN__HOME__LOCAL_INTENTS: 'false' } });
  try {
    for (const f of files.filter((x) => expected[x]!.transcript !== null).slice(0, 8)) {
      const o = await box.listen(f, true, TRAILING_MS);
      if (o.report.status === 'injected' && o.report.timings.first_audio_ms !== undefined) firstAudioLlm.push(o.report.timings.first_audio_ms);
    }
  } finally {
    await box.close();
  }
  for (const h of heard) console.log(h);
  console.log(`voice.effect_right: ${((100 * right) / files.length).toFixed(1)} %`);
  console.log(`voice.wrong_action_rate: ${((100 * wrong) / files.length).toFixed(1)} %`);
  console.log(`voice.exact_transcript: ${((100 * exact) / Math.max(1, commands)).toFixed(1)} %`);
  console.log(`voice.oov_rejected: ${((100 * oovRejected) / Math.max(1, oov)).toFixed(1)} %`);
  console.log(`voice.stt_rtf: ${(decode / Math.max(1, audio)).toFixed(3)}`);
  console.log(`voice.first_audio_command: ${median(firstAudioCommand).toFixed(1)} ms`);
  console.log(`voice.first_audio_command_p90: ${quantile(firstAudioCommand, 0.9).toFixed(1)} ms`);
  console.log(`voice.first_audio_command_from_last_sound: ${median(fromLastSound).toFixed(1)} ms`);
  console.log(`voice.first_audio_command_from_last_sound_p90: ${quantile(fromLastSound, 0.9).toFixed(1)} ms`);
  console.log(`voice.early_commits: ${early} of ${fromLastSound.length} commands`);
  console.log(`voice.first_audio_command_from_last_sound.no_early_commit: ${median(baseline).toFixed(1)} ms (baseline, same run; ratio ${(median(fromLastSound) / median(baseline)).toFixed(2)})`);
  console.log(`voice.first_audio_llm: ${median(firstAudioLlm).toFixed(1)} ms`);
}
