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
    'heard as "turn on all of lights in the office": forced alignment scores "on" and "off" within 1 % on this recording (acoustic model), a wrong action',
  'set Bed Light brightness to 50 percent.wav': 'heard "fifty" as "eight"/"eighty": the acoustic model scores "eight" higher (right intent, wrong number)',
  'set a timer for 3 hours and 10 minutes.wav': 'heard "ten minutes" as "a minute" (right intent, wrong duration)',
};
