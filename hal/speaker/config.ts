/**
 * Speaker settings (plugin.speaker.*), the typed config read from them and
 * `createSpeaker`, which picks aplay/sox or the simulator and logs which.
 */
import path from 'node:path';
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import { probeAlsa } from '../common/alsa.js';
import { chooseDriver, DRIVER_MODES, type DriverMode } from '../common/mode.js';
import { ProcessSpeaker, type PlayerKind } from './process-speaker.js';
import { SimSpeaker } from './sim-speaker.js';
import type { Speaker } from './types.js';

/** Typed speaker configuration. `simDir` is where the simulator writes WAVs; `volume` 0..100. */
export interface SpeakerConfig {
  driver: DriverMode;
  player: PlayerKind;
  /** ALSA device ('' = default). */
  device: string;
  volume: number;
  simDir: string;
  /** Simulator playback speed (1 = real time). */
  simSpeed?: number;
  /** Play the 'listening' earcon when listening starts (read by the voice pipeline). */
  earcons: boolean;
}

/** Settings of the speaker. */
export const SPEAKER_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.speaker.driver', type: 'string', default: 'auto', enum: DRIVER_MODES, description: "Speaker driver: 'auto' (aplay/play when a sound card can play, else the simulator), 'real' or 'sim'" },
  { key: 'plugin.speaker.player', type: 'string', default: 'aplay', enum: ['aplay', 'sox'], description: 'Player process: aplay (alsa-utils) or sox play' },
  { key: 'plugin.speaker.device', type: 'string', default: '', description: "ALSA playback device, e.g. 'plughw:CARD=Headphones' ('' = the system default)" },
  { key: 'plugin.speaker.volume', type: 'integer', default: 80, min: 0, max: 100, description: 'Software volume 0..100' },
  { key: 'plugin.speaker.sim_dir', type: 'string', default: '', description: 'Where the simulated speaker writes WAV files and speaker.jsonl ("" = <data dir>/speaker-sim)' },
  { key: 'plugin.speaker.earcons', type: 'boolean', default: true, description: 'Play a short chirp when the box starts listening' },
];

/** Read plugin.speaker.* ; `dataDir` resolves the default simulator directory. */
export function readSpeakerConfig(s: Pick<SettingsAPI, 'get'>, dataDir: string): SpeakerConfig {
  const simDir = s.get<string>('plugin.speaker.sim_dir');
  return {
    driver: s.get<DriverMode>('plugin.speaker.driver'),
    player: s.get<PlayerKind>('plugin.speaker.player'),
    device: s.get<string>('plugin.speaker.device'),
    volume: s.get<number>('plugin.speaker.volume'),
    simDir: simDir ? path.resolve(dataDir, simDir) : path.join(dataDir, 'speaker-sim'),
    earcons: s.get<boolean>('plugin.speaker.earcons'),
  };
}

/** Pick the real speaker (aplay or sox play) or the simulator ('auto': real when ALSA has a playback device) and log which. */
export function createSpeaker(cfg: SpeakerConfig, log: Logger): Speaker {
  const binary = cfg.player === 'sox' ? 'play' : 'aplay';
  const which = chooseDriver('speaker', cfg.driver, () => probeAlsa('p', binary), log);
  if (which === 'sim') {
    log.info({ dir: cfg.simDir }, 'speaker: simulated playback is written to WAV files');
    return new SimSpeaker({ dir: cfg.simDir, speed: cfg.simSpeed ?? 1, volume: cfg.volume });
  }
  return new ProcessSpeaker({ player: cfg.player, device: cfg.device || undefined, volume: cfg.volume, log });
}
