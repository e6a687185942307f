/**
 * Benchmark (issue 15): the EXPERIMENTAL offline wake phrase (pocketsphinx
 * keyphrase spotting, src/voice/keyphrase.ts) on real audio only: the real
 * recordings of ../shared/fixtures/voice/en and room noise; no synthetic
 * speech (espeak-ng's voice is near unrecognisable to this acoustic model,
 * so a synthetic measurement would say nothing about people).
 *
 *  wake.real_spotted     phrases the real recordings contain, spotted / present (recordings
 *                        saying "front door", "party time", "timer", "the temperature", "set a
 *                        timer", "lock the front door"), at the default threshold
 *                        (plugin.voice.wake_phrase_threshold)
 *  wake.false_per_hour   detections where the phrase was not said, per hour of audio scanned:
 *                        each of those phrases over the recordings that do not contain it, and
 *                        the suggested wake phrase "hey home agent" over every recording, all
 *                        followed by room noise (quiet fan-like noise at -50 dBFS, 2 min per run)
 *  wake.long_real_spotted, wake.long_false_per_hour  the same over the phrases of four or more
 *                        syllables only ("the temperature", "set a timer", "lock the front door", "hey home agent"):
 *                        what the option allows
 * The same figures at other thresholds follow with @T (wake.real_spotted@1e-10 ...), and a `#`
 * line per threshold gives each phrase's counts. A recording counts as spotted when the phrase was
 * detected at least once in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { wavToVoicePcm } from '../../hal/index.js';
import { checkWakePhrase, countSpotted, DEFAULT_WAKE_PHRASE_THRESHOLD } from '../../src/voice/keyphrase.js';
import { VOICE_DIR } from '../support/e2e-home.js';
import { noise } from '../voice/helpers.js';

/**
 * Phrases the real recordings contain (found in the file names, which are
 * what was said): the short ones of the issue's first measurement, and
 * phrases of four or more syllables, the kind a wake phrase must be.
 */
const PRESENT = ['front door', 'party time', 'timer', 'the temperature', 'set a timer', 'lock the front door'];
/** The suggested wake phrase (four syllables); no recording contains it. */
const SUGGESTED = 'hey home agent';
const THRESHOLDS = [1e-10, 1e-20, 1e-30, 1e-40, DEFAULT_WAKE_PHRASE_THRESHOLD].filter((t, i, a) => a.indexOf(t) === i);
const NOISE_MS = 120_000;

interface Figures {
  spotted: number;
  present: number;
  falseAlarms: number;
  hours: number;
}

function empty(): Figures {
  return { spotted: 0, present: 0, falseAlarms: 0, hours: 0 };
}

/** Every phrase over every recording and the room noise at `threshold`: the pooled figures and each phrase's. */
async function measure(files: Array<{ name: string; pcm: Buffer }>, room: Buffer, threshold: number): Promise<{ all: Figures; per: Map<string, Figures> }> {
  const all = empty();
  const per = new Map<string, Figures>();
  for (const phrase of [...PRESENT, SUGGESTED]) {
    const f = empty();
    per.set(phrase, f);
    for (const file of files) {
      const n = await countSpotted(file.pcm, { phrase, threshold });
      if (file.name.toLowerCase().includes(phrase)) {
        f.present++;
        if (n > 0) f.spotted++;
      } else {
        f.falseAlarms += n;
        f.hours += file.pcm.length / 32000 / 3600;
      }
    }
    f.falseAlarms += await countSpotted(room, { phrase, threshold });
    f.hours += room.length / 32000 / 3600;
    all.spotted += f.spotted;
    all.present += f.present;
    all.falseAlarms += f.falseAlarms;
    all.hours += f.hours;
  }
  return { all, per };
}

export async function run(): Promise<void> {
  const files = readdirSync(VOICE_DIR)
    .filter((f) => f.endsWith('.wav'))
    .sort()
    .map((name) => ({ name: name.replace(/\.wav$/, ''), pcm: Buffer.concat([wavToVoicePcm(readFileSync(path.join(VOICE_DIR, name))), noise(1000, -50, 3)]) }));
  const room = noise(NOISE_MS, -50, 11);
  for (const t of THRESHOLDS) {
    const { all: f, per } = await measure(files, room, t);
    const suffix = t === DEFAULT_WAKE_PHRASE_THRESHOLD ? '' : `@${t.toExponential(0)}`;
    console.log(`wake.real_spotted${suffix}: ${f.spotted}/${f.present} (${Math.round((100 * f.spotted) / f.present)} %) threshold ${t.toExponential(0)}`);
    console.log(`wake.false_per_hour${suffix}: ${(f.falseAlarms / f.hours).toFixed(1)} /h (${f.falseAlarms} over ${(f.hours * 60).toFixed(1)} min) threshold ${t.toExponential(0)}`);
    // what the option allows: phrases of four or more syllables
    const long = empty();
    for (const [p, x] of per) {
      if ((await checkWakePhrase(p).catch(() => undefined)) === undefined) continue;
      long.spotted += x.spotted;
      long.present += x.present;
      long.falseAlarms += x.falseAlarms;
      long.hours += x.hours;
    }
    console.log(`wake.long_real_spotted${suffix}: ${long.spotted}/${long.present} threshold ${t.toExponential(0)}`);
    console.log(`wake.long_false_per_hour${suffix}: ${(long.falseAlarms / long.hours).toFixed(1)} /h (${long.falseAlarms} over ${(long.hours * 60).toFixed(1)} min) threshold ${t.toExponential(0)}`);
    const detail = [...per].map(([p, x]) => `${p}: ${x.present ? `${x.spotted}/${x.present} spotted, ` : ''}${x.falseAlarms} false`).join('; ');
    console.log(`# ${t.toExponential(0)}: ${detail}`);
  }
}
