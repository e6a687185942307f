/**
 * Public surface of the voice pipeline (issue 7), for the service wiring,
 * the CLI `listen` command and the benchmarks. The pocketsphinx command
 * recogniser and the STT order chain live in src/voice/stt/ (own modules).
 */
export { VoicePlugin, type VoicePluginDeps, type UtteranceTimings, type UtteranceOutcome, type Trigger } from './pipeline.js';
export type { Microphone } from './audio-input.js';
export { AssistantStateMachine, TRANSITIONS, type StateEvent, type Transition } from './state-machine.js';
export { AssistantStatePlugin, followTurns } from './assistant-state-plugin.js';
export { SpeechQueue, type Speaker } from './speech-queue.js';
export { Endpointer, frameFeatures, type EndpointerOptions, type EndpointEvent, type EndReason } from './vad.js';
export { SentenceSplitter, splitSentences, speakable } from '../kernel/sentences.js';
export { VOICE_SETTINGS, registerVoiceSettings, voiceSetting, createTtsEngine, createWakeDetector, createWyomingAsr } from './settings.js';
export type { TtsEngine, TtsAudio, TtsOptions } from './tts/types.js';
export { EspeakTts, ESPEAK_SAMPLE_RATE } from './tts/espeak.js';
export { PiperTts } from './tts/piper.js';
export { WyomingTts } from './wyoming/tts-client.js';
export { WyomingWake, type WakeWordDetector, type WakeDetection } from './wyoming/wake-client.js';
export { WyomingAsr } from './stt/wyoming-asr.js';
export { WyomingConnection, describeWyoming, type WyomingEndpoint } from './wyoming/connection.js';
export { encodeEvent, WyomingDecoder, type WyomingEvent } from './wyoming/codec.js';
export * from './errors.js';
