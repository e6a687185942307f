/**
 * Bench `voice-stp`: speech-to-phrase's own generated test recordings
 * (tests/wav/en/generated in github.com/OHF-Voice/speech-to-phrase: its
 * English sentences spoken by a synthetic voice that is not espeak-ng),
 * decoded as the voice pipeline hears them (test/voice-stt/wav.ts) with the
 * fixture home's grammar. Nothing here was tuned on them, so they are a
 * held-out measure of both the sentence coverage and the rejection rules.
 * They are not in this repository: set HOMEAGENT_STP_WAVS to that folder of
 * a checkout (file names are the sentences); without it the bench says so
 * and prints nothing else. Nothing is downloaded.
 *
 * Judged against the typed matcher on the file name in the same home: a
 * sentence this home can carry out (it matches, and a device named with a
 * room is in that room) is right when heard as that command (asking first
 * counts, as in voice-synth); an action that the typed sentence would not
 * take is wrong, on any sentence. Figures:
 *   voice.stp_effect_right        right, of the sentences this home can carry out
 *   voice.stp_wrong_action_rate   recordings with a wrong action, of all
 *   voice.stp_asked               of those right, the ones that ask for a yes first
 *   ..._nofiller                  the same without the grammar's filler (baseline, same run)
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import type { IntentMatch } from '../../src/intents/types.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { parseWav } from '../../hal/common/wav.js';
import { fixtureVocabulary } from '../voice-stt/home-vocab.js';
import { feed, asThePipelineHearsIt } from '../voice-stt/wav.js';
import { actionsOf, pct, rightOf, same } from './voice-synth.js';

interface Tally {
  n: number;
  home: number;
  right: number;
  asked: number;
  wrong: number;
  notes: string[];
}

/** The typed command can be carried out in the fixture home: it matched, and a device named with a room is in it. */
function forThisHome(want: IntentMatch | null): want is IntentMatch {
  if (!want) return false;
  const { name, area } = want.slots;
  if (typeof name !== 'string' || typeof area !== 'string') return true;
  const e = fixtureVocabulary().entities.find((x) => x.name.toLowerCase() === name.toLowerCase());
  return e?.area === area;
}

async function decodeAll(dir: string, files: string[], filler: boolean): Promise<Tally> {
  const vocab = fixtureVocabulary();
  const engine = new PocketsphinxStt(filler ? {} : { fillerWeights: null });
  await engine.setVocabulary(vocab);
  const t: Tally = { n: 0, home: 0, right: 0, asked: 0, wrong: 0, notes: [] };
  try {
    for (const f of files) {
      const sentence = f.replace(/\.wav$/, '').toLowerCase();
      const want = matchIntent(sentence, vocab, 'en');
      const wav = parseWav(readFileSync(path.join(dir, f)));
      const session = engine.start();
      feed(asThePipelineHearsIt(wav.data), (b) => session.write(b));
      const r: SttResult = await session.end();
      t.n++;
      const typedActs = want ? actionsOf({ text: sentence, confidence: 1, rejected: false, engine: 'typed', intent: want }) : [];
      const wrong = actionsOf(r).filter((a) => !typedActs.some((w) => same(a, w)));
      if (wrong.length) {
        t.wrong++;
        t.notes.push(`# wrong action: "${sentence}" heard "${r.text}"`);
      }
      if (forThisHome(want)) {
        t.home++;
        if (rightOf(r, want)) {
          t.right++;
          if (r.intent?.unsure_between) t.asked++;
        }
      }
    }
  } finally {
    await engine.close();
  }
  return t;
}

export async function run(): Promise<void> {
  const dir = process.env.HOMEAGENT_STP_WAVS;
  if (!dir || !existsSync(dir)) {
    console.log('# voice-stp: set HOMEAGENT_STP_WAVS to the tests/wav/en/generated folder of a speech-to-phrase checkout (not in this repository); skipped');
    return;
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.wav')).sort();
  const t = await decodeAll(dir, files, true);
  const base = await decodeAll(dir, files, false);
  for (const n of t.notes) console.log(n);
  console.log(`# ${t.n} recordings, ${t.home} of them commands this home can carry out`);
  console.log(`voice.stp_effect_right: ${pct(t.right, t.home)}`);
  console.log(`voice.stp_asked: ${pct(t.asked, t.right)} (of those right, the ones that ask for a yes first)`);
  console.log(`voice.stp_wrong_action_rate: ${pct(t.wrong, t.n)}`);
  console.log(`voice.stp_effect_right_nofiller: ${pct(base.right, base.home)} (baseline, same run)`);
  console.log(`voice.stp_wrong_action_rate_nofiller: ${pct(base.wrong, base.n)} (baseline, same run)`);
}
