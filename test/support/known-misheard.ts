/**
 * Recordings the local recogniser (Debian 12's pocketsphinx 0.8 with the
 * en-us acoustic model) still gets wrong, with what it hears and why. Tests
 * of these recordings are registered as `todo` — they run and report, but
 * the gap stays visible in every test run instead of being hidden by a
 * weaker assertion. Measured with test/bench/voice-stt.ts and voice.ts.
 * Remove an entry as soon as the recogniser gets it right.
 */
export const KNOWN_MISHEARD: Readonly<Record<string, string>> = {
  'turn off all of the lights in the Office.wav':
    'heard as "turn on all of lights in the office" (no /f/ friction stands above the noise floor here, and forced alignment scores "turn on ..." above the words said with either front end; at plugin.voice.pause_ms 400 it was "turn all of lights in the office to 2", rejected for its "to two" in the room noise); a heard "turn on all of" asks first (pocketsphinx-judge.ts HIDDEN_PARTICLE) and the test answers "no": no action, not the right one',
  'set Bed Light brightness to 50 percent.wav':
    'heard "fifty" as "eighty" ("eight" without noise removal): "to fifty" is 0-10 dB above this recording\'s noise (tones at 4.1 and 6 kHz, clicks); the acoustic model scores the wrong number higher; the words around it take most of "fifty" and "eighty" is squeezed into 120 ms (40 ms per phone), so it is rejected as a squeezed number (pocketsphinx-duration.ts MIN_NUMBER_WORD_MS_PER_PHONE): no action, not the right one',
};
