/**
 * Benchmark of the local command recogniser over the fixture recordings
 * (../shared/fixtures/voice/en, expected.json) with the grammar of the
 * fixture home, using the real pocketsphinx of Debian 12, each recording cut
 * as the voice pipeline cuts it (asThePipelineHearsIt). Prints:
 *   voice.exact_transcript  share of commands whose transcript is exactly the expected one
 *   voice.right_intent      share of commands whose intent and slots equal the matcher's reading of the expected transcript
 *   voice.wrong_intent      share of commands accepted with a different intent (the harmful case)
 *   voice.oov_rejected      share of out-of-vocabulary recordings rejected
 *   voice.stt_rtf           decoding wall time / audio time, PCM fed at once (two decoders per utterance)
 *   voice.stt_finish_ms     median time from end() to the result
 * Run: node --import tsx -e "import('./test/bench/voice-stt.ts').then(m=>m.run())"
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import { fixtureVocabulary, voiceDir } from '../voice-stt/home-vocab.js';
import { asThePipelineHearsIt, feed, readWavPcm } from '../voice-stt/wav.js';

/** Run the benchmark and print its figures. */
export async function run(): Promise<void> {
  const expected = (JSON.parse(readFileSync(path.join(voiceDir, 'expected.json'), 'utf8')) as { expected: Record<string, { transcript: string | null }> }).expected;
  const files = readdirSync(voiceDir).filter((f) => f.endsWith('.wav')).sort();
  const vocab = fixtureVocabulary();
  const engine = new PocketsphinxStt();
  await engine.setVocabulary(vocab);
  let commands = 0;
  let exact = 0;
  let right = 0;
  let wrong = 0;
  let oov = 0;
  let oovRejected = 0;
  let audioS = 0;
  let wallS = 0;
  const finish: number[] = [];
  try {
    for (const f of files) {
      const pcm = asThePipelineHearsIt(readWavPcm(path.join(voiceDir, f)));
      audioS += pcm.length / 32000;
      const t0 = performance.now();
      const s = engine.start();
      feed(pcm, (b) => s.write(b));
      const r = await s.end();
      wallS += (performance.now() - t0) / 1000;
      finish.push(r.finish_ms ?? 0);
      const d = engine.lastDetails;
      const want = expected[f]?.transcript ?? null;
      console.log(
        `# ${f}: ${r.rejected ? 'rejected' : `"${r.text}" ${r.intent?.intent ?? ''}`} (heard "${d?.hypothesis ?? ''}", gap ${d?.scoreGap?.toFixed(1) ?? '-'}${d?.grammarMismatch ? ', no final state' : ''})`,
      );
      if (want === null) {
        oov++;
        if (r.rejected) oovRejected++;
        continue;
      }
      commands++;
      if (r.text === want) exact++;
      const w = matchIntent(want, vocab, 'en');
      if (!r.rejected && r.intent && w) {
        if (r.intent.intent === w.intent && JSON.stringify(r.intent.slots) === JSON.stringify(w.slots)) right++;
        else if (r.intent.intent !== w.intent) wrong++;
      }
    }
  } finally {
    await engine.close();
  }
  finish.sort((a, b) => a - b);
  const pct = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`);
  console.log(`voice.exact_transcript: ${pct(exact, commands)}`);
  console.log(`voice.right_intent: ${pct(right, commands)}`);
  console.log(`voice.wrong_intent: ${pct(wrong, commands)}`);
  console.log(`voice.oov_rejected: ${pct(oovRejected, oov)}`);
  console.log(`voice.stt_rtf: ${(wallS / audioS).toFixed(3)}`);
  console.log(`voice.stt_finish_ms: ${(finish[Math.floor(finish.length / 2)] ?? 0).toFixed(0)} ms`);
}
