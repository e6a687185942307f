/**
 * Benchmark: how fast stop() silences the real speaker. Plays through
 * `aplay -D null` (a real child process, no sound card), cuts a streamed
 * utterance mid-play and measures from the stop() call to the player's exit.
 * Target (issue 6): under 20 ms. Prints speaker.stop_p50 and speaker.stop_p99.
 */
import { once } from 'node:events';
import { generateTones } from '../../hal/common/pcm.js';
import { ProcessSpeaker } from '../../hal/speaker/process-speaker.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Run N=100 cut cycles and print p50/p99 of the stop latency in ms. */
export async function run(): Promise<void> {
  const speaker = new ProcessSpeaker({ player: 'aplay', device: process.env.HOMEAGENT_BENCH_SPEAKER_DEVICE ?? 'null' });
  const tone = generateTones([{ freqHz: 440, durationMs: 200 }], 16000);
  const samples: number[] = [];
  for (let i = 0; i < 100; i++) {
    const started = once(speaker, 'start');
    const stream = speaker.openStream({ sampleRate: 16000, id: `bench${i}` });
    stream.write(tone);
    await started;
    await new Promise((r) => setTimeout(r, 15)); // let aplay open the device and start playing
    const t0 = performance.now();
    await speaker.stop();
    samples.push(performance.now() - t0);
    await stream.done;
  }
  await speaker.close();
  samples.sort((a, b) => a - b);
  console.log(`speaker.stop_p50: ${percentile(samples, 50).toFixed(2)} ms`);
  console.log(`speaker.stop_p99: ${percentile(samples, 99).toFixed(2)} ms`);
}
