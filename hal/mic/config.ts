/**
 * Microphone settings (plugin.mic.*), the typed config and `createMicrophone`,
 * which picks arecord/sox or a simulated source (a WAV file when
 * plugin.mic.sim_file is set, else a push source fed by code) and logs which.
 */
import path from 'node:path';
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import { probeAlsa } from '../common/alsa.js';
import { chooseDriver, DRIVER_MODES, type DriverMode } from '../common/mode.js';
import { FileMicrophone, type FilePace } from './file-mic.js';
import { PushMicrophone } from './push-mic.js';
import { RecorderMicrophone, type RecorderKind } from './recorder-mic.js';
import type { Microphone } from './types.js';

/** Typed microphone configuration. */
export interface MicConfig {
  driver: DriverMode;
  recorder: RecorderKind;
  /** ALSA capture device ('' = default), e.g. 'plughw:CARD=Device,DEV=0'. */
  device: string;
  /** Simulator: WAV to stream as the mic ('' = a push source). */
  simFile: string;
  /** Simulator pace for simFile. */
  simPace: FilePace;
}

/** Settings of the microphone. */
export const MIC_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.mic.driver', type: 'string', default: 'auto', enum: DRIVER_MODES, description: "Microphone driver: 'auto' (arecord/sox when a sound card can capture, else the simulator), 'real' or 'sim'" },
  { key: 'plugin.mic.recorder', type: 'string', default: 'arecord', enum: ['arecord', 'sox'], description: 'Recorder process: arecord (alsa-utils) or sox' },
  { key: 'plugin.mic.device', type: 'string', default: '', description: "ALSA capture device, e.g. 'plughw:CARD=Device,DEV=0' ('' = the system default)" },
  { key: 'plugin.mic.sim_file', type: 'string', default: '', description: 'Simulator: a WAV file streamed as if it were the mic ("" = audio is pushed by the CLI/WebUI)' },
  { key: 'plugin.mic.sim_pace', type: 'string', default: 'realtime', description: "Simulator pace: 'realtime', 'fast' or a speed factor like '2'" },
];

/** Read plugin.mic.*; relative sim_file paths are resolved against `dataDir`. */
export function readMicConfig(s: Pick<SettingsAPI, 'get'>, dataDir: string): MicConfig {
  const simFile = s.get<string>('plugin.mic.sim_file');
  const pace = String(s.get<string>('plugin.mic.sim_pace'));
  const factor = Number(pace);
  return {
    driver: s.get<DriverMode>('plugin.mic.driver'),
    recorder: s.get<RecorderKind>('plugin.mic.recorder'),
    device: s.get<string>('plugin.mic.device'),
    simFile: simFile ? path.resolve(dataDir, simFile) : '',
    simPace: pace === 'fast' ? 'fast' : Number.isFinite(factor) && factor > 0 ? factor : 'realtime',
  };
}

/** Pick the real recorder or a simulated source ('auto': real when ALSA has a capture device) and log which. */
export function createMicrophone(cfg: MicConfig, log: Logger): Microphone {
  const binary = cfg.recorder === 'sox' ? 'sox' : 'arecord';
  const which = chooseDriver('mic', cfg.driver, () => probeAlsa('c', binary), log);
  if (which === 'real') return new RecorderMicrophone({ recorder: cfg.recorder, device: cfg.device || undefined, log });
  if (cfg.simFile) {
    log.info({ file: cfg.simFile, pace: cfg.simPace }, 'mic: simulated by a WAV file');
    return new FileMicrophone({ path: cfg.simFile, pace: cfg.simPace });
  }
  log.info({}, 'mic: simulated by a push source (audio comes from the CLI or WebUI)');
  return new PushMicrophone();
}
