/**
 * Benchmark: spoken answers to a yes/no question (a risky action's
 * confirmation), decoded by the real pocketsphinx with the answer grammar
 * (src/intents/answers.ts SPOKEN_ANSWERS_EN; SttStartOptions.answer) as the
 * voice box does while a question waits. espeak-ng (Debian) speaks yes/no
 * phrases and, as traps, other speech a person or a television might make in
 * that window (the confusion set's commands, unrelated sentences, short words
 * that sound like answers: "note", "yesterday", "what", and a tester's
 * near-homophones of "yes": "Jess", "chess", "I guess", "bless you", "less";
 * a later tester's "yet", "is it", "this", "yellow", "s", "mess"),
 * with room noise (-50 dBFS). Each answer missed is printed. ANSWER_MAX_SCORE_GAP and
 * ANSWER_DECOYS_EN were chosen on the tune voices; the figures
 * are the report voices' (test/bench/voice-synth.ts TUNE_VOICES, REPORT_VOICES):
 *  voice.answers_right          answers heard as the answer said
 *  voice.answers_false_yes      any utterance taken for a yes that was not one, over all utterances
 *  voice.answers_traps_taken    traps taken for any answer (a no included), over the traps
 * and the same with `_tune` for the tune voices; and bursts of noise (sox's
 * brown, pink and white noise, 0.12 to 1 s at two levels, under the room
 * noise: a cough, a clap, a bag put down; not the bursts MIN_VOICED_MS was
 * chosen on, which were 0.08 to 0.8 s at three other levels):
 *  voice.answers_noise_yes      bursts taken for a yes, over the bursts
 *  voice.answers_noise_taken    bursts taken for any answer, over the bursts
 * and, in harder rooms (ROOMS: pink noise at -35 dBFS, a room's echo, a
 * speaker 15 dB quieter; a tester's "yet" unlocked the door there 15 of 50
 * times), answers (ROOM_ANSWERS) and the stops a yes is mistaken for
 * (ROOM_TRAPS: "yet", "get", "jet"); ending.ts's HISS_RATIO and
 * HISS_SOUND_DB were chosen on the tune voices there:
 *  voice.answers_rooms_right      answers heard as the answer said (report voices; and _tune)
 *  voice.answers_rooms_false_yes  utterances taken for a yes that was not one, over all (report voices; and _tune)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { answerMeaning, spokenAnswer } from '../../src/intents/answers.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { fixtureVocabulary } from '../voice-stt/home-vocab.js';
import { feed, readWavPcm } from '../voice-stt/wav.js';
import { mix, noise } from '../voice/helpers.js';
import { ROOMS } from '../support/rooms.js';
import { speak } from '../support/espeak.js';
import { CONFUSION_SET, REPORT_VOICES, TUNE_VOICES, pct, utteranceSeed } from './voice-synth.js';

/** Answers said (each a yes or a no of SPOKEN_ANSWERS_EN). */
const ANSWERS = ['yes', 'no', 'yeah', 'no thanks', 'cancel', 'sure', 'nope', 'okay', 'yep', 'never mind'];
/** Traps: speech that is no answer. */
const TRAPS = [...CONFUSION_SET.in_vocab, ...CONFUSION_SET.unrelated.slice(0, 2), 'what', 'hello there', 'I said unlock it', 'yesterday', 'note', 'maybe later', 'Jess', 'chess', 'I guess', 'bless you', 'less', 'yet', 'is it', 'this', 'yellow', 's', 'mess'];

interface Tally {
  answers: number;
  answersRight: number;
  traps: number;
  trapsTaken: number;
  falseYes: number;
  n: number;
  notes: string[];
}

/**
 * Count one decode `r` of `said` into `t`: an answer when `want` is one (true yes, false no), else a trap; a false
 * yes is noted (with `where`), and an answer missed too when `noteMissed`.
 */
function count(t: Tally, said: string, want: boolean | undefined, r: SttResult, where: string, noteMissed: boolean): void {
  const heard = r.rejected ? undefined : spokenAnswer(r.text);
  t.n++;
  if (want !== undefined) {
    t.answers++;
    if (heard === want) t.answersRight++;
    else if (noteMissed) t.notes.push(`# missed answer (${where}): "${said}" heard ${r.rejected ? 'nothing' : `"${r.text}"`}`);
  } else {
    t.traps++;
    if (heard !== undefined) t.trapsTaken++;
  }
  if (heard === true && want !== true) {
    t.falseYes++;
    t.notes.push(`# false yes (${where}): "${said}" heard "${r.text}"`);
  }
}

async function measure(dir: string, voices: readonly string[]): Promise<Tally> {
  const engine = new PocketsphinxStt();
  await engine.setVocabulary(fixtureVocabulary());
  const t: Tally = { answers: 0, answersRight: 0, traps: 0, trapsTaken: 0, falseYes: 0, n: 0, notes: [] };
  let k = 0;
  try {
    for (const voice of voices) {
      for (const [kind, list] of [['answer', ANSWERS], ['trap', TRAPS]] as const) {
        for (const said of list) {
          const seed = utteranceSeed(voice, said);
          const { pcm } = await speak(dir, String(++k), said, { voice, rate: 145 + (seed % 4) * 15 });
          const session = engine.start({ answer: true });
          feed(mix(pcm, noise(pcm.length / 32, -50, seed)), (b) => session.write(b));
          count(t, said, kind === 'answer' ? answerMeaning(said) : undefined, await session.end(), voice, true);
        }
      }
    }
  } finally {
    await engine.close();
  }
  return t;
}

/** Answers said in the harder rooms. */
const ROOM_ANSWERS = ['yes', 'yeah', 'sure', 'no', 'nope', 'not yet', 'unsure'];
/** Stops that end like a yes without its hiss. */
const ROOM_TRAPS = ['yet', 'get', 'jet'];

/** ROOM_ANSWERS and ROOM_TRAPS in every room of ROOMS, by `voices`. */
async function measureRooms(dir: string, voices: readonly string[]): Promise<Tally> {
  const engine = new PocketsphinxStt();
  await engine.setVocabulary(fixtureVocabulary());
  const t: Tally = { answers: 0, answersRight: 0, traps: 0, trapsTaken: 0, falseYes: 0, n: 0, notes: [] };
  let k = 0;
  try {
    for (const room of ROOMS) {
      for (const voice of voices) {
        for (const said of [...ROOM_ANSWERS, ...ROOM_TRAPS]) {
          const seed = utteranceSeed(voice, said);
          const { wav, pcm } = await speak(dir, `room${++k}`, said, { voice, rate: 130 + (seed % 4) * 30 });
          const session = engine.start({ answer: true });
          feed(await room.apply(wav, pcm, seed, dir), (b) => session.write(b));
          count(t, said, answerMeaning(said), await session.end(), `${room.name}, ${voice}`, false);
        }
      }
    }
  } finally {
    await engine.close();
  }
  return t;
}

/** Bursts of noise heard while a question waits: how many were taken for a yes, and for any answer. */
async function measureNoise(dir: string): Promise<{ n: number; yes: number; taken: number; notes: string[] }> {
  const exec = promisify(execFile);
  const engine = new PocketsphinxStt();
  await engine.setVocabulary(fixtureVocabulary());
  const t = { n: 0, yes: 0, taken: 0, notes: [] as string[] };
  try {
    for (const kind of ['brownnoise', 'pinknoise', 'whitenoise']) {
      for (const seconds of [0.12, 0.2, 0.3, 0.5, 1]) {
        for (const vol of [0.35, 0.7]) {
          const file = path.join(dir, `burst-${kind}-${seconds}-${vol}.wav`);
          await exec('sox', ['-R', '-n', '-r', '16000', '-c', '1', '-b', '16', file, 'synth', String(seconds), kind, 'fade', 'q', '0.02', String(seconds), String(seconds / 3), 'vol', String(vol), 'pad', '0.4', '0.7']);
          const pcm = readWavPcm(file);
          const session = engine.start({ answer: true });
          feed(mix(pcm, noise(pcm.length / 32, -50, ++t.n)), (b) => session.write(b));
          const r = await session.end();
          const heard = r.rejected ? undefined : spokenAnswer(r.text);
          if (heard !== undefined) {
            t.taken++;
            t.notes.push(`# noise taken for an answer: ${kind} ${seconds} s at ${vol} heard "${r.text}"`);
          }
          if (heard === true) t.yes++;
        }
      }
    }
  } finally {
    await engine.close();
  }
  return t;
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-answers-'));
  try {
    const report = await measure(dir, REPORT_VOICES);
    const tune = await measure(dir, TUNE_VOICES);
    for (const n of [...report.notes, ...tune.notes.map((x) => x.replace('# false yes', '# false yes, tune'))]) console.log(n);
    console.log(`# ${report.answers} answers and ${report.traps} traps on the report voices (${REPORT_VOICES.join(', ')})`);
    console.log(`voice.answers_right: ${pct(report.answersRight, report.answers)}`);
    console.log(`voice.answers_false_yes: ${pct(report.falseYes, report.n)}`);
    console.log(`voice.answers_traps_taken: ${pct(report.trapsTaken, report.traps)}`);
    console.log(`voice.answers_right_tune: ${pct(tune.answersRight, tune.answers)}`);
    console.log(`voice.answers_false_yes_tune: ${pct(tune.falseYes, tune.n)}`);
    console.log(`voice.answers_traps_taken_tune: ${pct(tune.trapsTaken, tune.traps)}`);
    const roomsReport = await measureRooms(dir, REPORT_VOICES);
    const roomsTune = await measureRooms(dir, TUNE_VOICES);
    for (const n of [...roomsReport.notes, ...roomsTune.notes.map((x) => x.replace('# false yes', '# false yes, tune'))]) console.log(n);
    console.log(`# harder rooms (${ROOMS.map((r) => r.name).join(', ')}): ${roomsReport.answers} answers and ${roomsReport.traps} stops on the report voices`);
    console.log(`voice.answers_rooms_right: ${pct(roomsReport.answersRight, roomsReport.answers)}`);
    console.log(`voice.answers_rooms_false_yes: ${pct(roomsReport.falseYes, roomsReport.n)}`);
    console.log(`voice.answers_rooms_right_tune: ${pct(roomsTune.answersRight, roomsTune.answers)}`);
    console.log(`voice.answers_rooms_false_yes_tune: ${pct(roomsTune.falseYes, roomsTune.n)}`);
    const bursts = await measureNoise(dir);
    for (const n of bursts.notes) console.log(n);
    console.log(`# ${bursts.n} bursts of noise`);
    console.log(`voice.answers_noise_yes: ${pct(bursts.yes, bursts.n)}`);
    console.log(`voice.answers_noise_taken: ${pct(bursts.taken, bursts.n)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
