/**
 * The TTS engine interface shared by espeak-ng, piper and Wyoming TTS.
 * Engines return whole sentences of mono s16le PCM at their own sample rate;
 * the speaker resamples if it needs to.
 */

/** Synthesised speech: mono s16le PCM, `sampleRate` in Hz. */
export interface TtsAudio {
  pcm: Buffer;
  sampleRate: number;
}

/** Per-call options. */
export interface TtsOptions {
  /** BCP-47-ish language of the text ('en', 'en-US', 'zh', 'zh-CN', 'cmn'); picks the voice when `voice` is unset. */
  language?: string;
  /** Engine-specific voice name (espeak-ng 'en-us', a piper speaker id, a Wyoming voice name). */
  voice?: string;
  /** Aborts synthesis: the child process is killed / the connection closed; the promise rejects with VoiceAbortError. */
  signal?: AbortSignal;
}

/** A text-to-speech engine. */
export interface TtsEngine {
  readonly name: string;
  /**
   * Speak `text` (one sentence or a short reply).
   * @throws TtsError (code TTS_FAILED) when the engine fails; VoiceAbortError when aborted;
   * Wyoming errors (WYOMING_CONNECT, TIMEOUT, ...) from network engines.
   */
  synthesize(text: string, opts?: TtsOptions): Promise<TtsAudio>;
  close?(): Promise<void>;
}

/** True for Chinese language tags ('zh', 'zh-CN', 'cmn', 'yue' is not Mandarin and stays false). */
export function isMandarin(language: string | undefined): boolean {
  if (!language) return false;
  const l = language.toLowerCase();
  return l === 'zh' || l.startsWith('zh-') || l.startsWith('zh_') || l === 'cmn' || l.startsWith('cmn-');
}
