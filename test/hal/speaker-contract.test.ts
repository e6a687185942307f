/**
 * The speaker contract against the simulator and against the real driver with
 * `aplay -D null` (a real child process, no sound card needed; always runs),
 * plus sox `play` with the null output when HOMEAGENT_HW_TESTS=1 on a Pi with
 * a sound card, against the default device.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProcessSpeaker } from '../../hal/speaker/process-speaker.js';
import { SimSpeaker } from '../../hal/speaker/sim-speaker.js';
import { speakerContract } from './contracts/speaker.js';

speakerContract('SimSpeaker (20x real time)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-speaker-'));
  return { speaker: new SimSpeaker({ dir, speed: 20 }), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

speakerContract('ProcessSpeaker: aplay -D null', async () => ({
  speaker: new ProcessSpeaker({ player: 'aplay', device: 'null' }),
  cleanup: async () => {},
}));

if (process.env.HOMEAGENT_HW_TESTS === '1') {
  speakerContract('ProcessSpeaker: aplay on the default sound card', async () => ({
    speaker: new ProcessSpeaker({ player: 'aplay', device: process.env.HOMEAGENT_HW_SPEAKER_DEVICE || undefined, volume: 20 }),
    cleanup: async () => {},
  }));
}
// Without HOMEAGENT_HW_TESTS=1 the sound-card run is not registered: this machine has no sound card.
