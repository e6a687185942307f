/**
 * The hardware layer's public surface. Each kind of device has an interface,
 * a real driver and a simulated driver, chosen by configuration
 * ('auto' | 'real' | 'sim'; auto = real when the hardware is there, else the
 * simulator, logged). Plugins: GpioPlugin (kernel-level stop button, push-to-
 * talk, LEDs), SerialPlugin, CameraPlugin. The voice pipeline uses the
 * microphone and speaker as plain classes from `createMicrophone` /
 * `createSpeaker`.
 */
import type { SettingDef, SettingsAPI } from '../src/kernel/settings-types.js';
import { CAMERA_SETTINGS } from './camera/plugin.js';
import { GPIO_SETTINGS } from './gpio/config.js';
import { MIC_SETTINGS } from './mic/config.js';
import { SERIAL_SETTINGS } from './serial/plugin.js';
import { SPEAKER_SETTINGS } from './speaker/config.js';

export { chooseDriver, DRIVER_MODES, type DriverMode, type Probe } from './common/mode.js';
export { HalError } from './common/errors.js';
export { VOICE_FORMAT, EARCONS, generateTones, applyVolume, pcmDurationMs, type PcmFormat, type EarconName } from './common/pcm.js';
export { parseWav, encodeWav, WavError, type WavInfo, type WavFormat } from './common/wav.js';

export { createGpio, GPIO_SETTINGS, readGpioConfig, type GpioConfig, type CreateGpioConfig, type LongPressAction } from './gpio/config.js';
export { GpioPlugin, type GpioPluginDeps, type ButtonRole } from './gpio/plugin.js';
export { Button, type ButtonOptions, type ButtonEvents } from './gpio/button.js';
export { GpioLeds, DEFAULT_LED_PATTERNS, type LedPattern, type StatusIndicator } from './gpio/leds.js';
export { OnoffGpioDriver, probeSysfsGpio } from './gpio/onoff-driver.js';
export { SimGpioDriver } from './gpio/sim-driver.js';
export { resolveSysfsGpio, listGpioChips, type GpioChipInfo } from './gpio/sysfs.js';
export { GpioExportError, type GpioDriver, type GpioInput, type GpioOutput, type Level } from './gpio/types.js';

export { createMicrophone, MIC_SETTINGS, readMicConfig, type MicConfig } from './mic/config.js';
export { RecorderMicrophone, recorderCommand, type RecorderMicOptions } from './mic/recorder-mic.js';
export { FileMicrophone, wavToVoicePcm, type FileMicOptions, type FilePace } from './mic/file-mic.js';
export { PushMicrophone } from './mic/push-mic.js';
export { MicError, type Microphone, type MicEvents } from './mic/types.js';

export { createSpeaker, SPEAKER_SETTINGS, readSpeakerConfig, type SpeakerConfig } from './speaker/config.js';
export { ProcessSpeaker, type ProcessSpeakerOptions } from './speaker/process-speaker.js';
export { SimSpeaker, type SimPlayback, type SimSpeakerOptions } from './speaker/sim-speaker.js';
export { SpeakerError, type Speaker, type SpeakerStream, type PlayOptions, type PlayResult, type SpeakerStopReport, type SpeakerEvents } from './speaker/types.js';

export { SerialPlugin, SERIAL_SETTINGS, mockPortFactory, systemPortFactory, type SerialPluginDeps } from './serial/plugin.js';
export { SerialDevice, SerialError, BAUD_RATES, type PortFactory, type SerialEvents } from './serial/serial-device.js';

export { CameraPlugin, CAMERA_SETTINGS, createCamera, type CameraConfig, type CameraDeps, type Snapshot } from './camera/plugin.js';
export { prepareImage, CameraError, type PreparedImage, type PrepareOptions } from './camera/image.js';
export { FileSnapshotSource, HttpSnapshotSource, MqttSnapshotSource, SimSnapshotSource, type SnapshotSource, type MqttSubscribe } from './camera/sources.js';

/** Every HAL setting (plugin.gpio.*, plugin.mic.*, plugin.speaker.*, plugin.serial.*, plugin.camera.*). */
export const HAL_SETTINGS: readonly SettingDef[] = [...GPIO_SETTINGS, ...MIC_SETTINGS, ...SPEAKER_SETTINGS, ...SERIAL_SETTINGS, ...CAMERA_SETTINGS];

/**
 * Register the microphone and speaker settings (plugin.mic.*, plugin.speaker.*),
 * which have no plugin of their own: the voice pipeline calls this before
 * `readMicConfig` / `readSpeakerConfig`. The plugins register their own keys.
 */
export function registerVoiceDeviceSettings(settings: Pick<SettingsAPI, 'register'>): void {
  for (const def of [...MIC_SETTINGS, ...SPEAKER_SETTINGS]) settings.register(def);
}
