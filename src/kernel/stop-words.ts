/**
 * Typed alone, these are the stop button (English and Chinese): the text
 * console's line and `homeagent ask` (a tester's `homeagent ask stop` went to
 * the agent as a message while the box went on speaking). A trailing full
 * stop or exclamation mark is allowed.
 */
export const STOP_WORDS = /^(\/stop|stop|停|停止|别说了)[.!。！]?$/i;

/** Whether `text` (trimmed) is a stop word alone. */
export function isStopWord(text: string): boolean {
  return STOP_WORDS.test(text.trim());
}
