/**
 * JSON from outside the box (MQTT payloads, the control socket, plugins'
 * JSON-RPC, the WebUI, Wyoming, an LLM's tool arguments) parsed with a bound
 * on its nesting. JSON.parse itself takes any depth, but what then walks the
 * value recursively (JSON.stringify, validation, hashing) overflows the
 * stack: a breaking tester's retained discovery config of 200 KB nested
 * 100,000 arrays deep threw "Maximum call stack size exceeded" at every
 * rebuild of the device list, which froze it (new devices unknown, removed
 * ones kept) until the topic was cleared.
 */

/** Deepest nesting of arrays and objects taken (parseJson): no protocol the box speaks nests half as deep. */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest nesting of arrays and objects in `text` (0 for a scalar), read
 * without parsing (strings and their escapes skipped); it stops counting at
 * `stopAt`. Malformed text gives a number too: JSON.parse judges the rest.
 */
export function jsonDepth(text: string, stopAt = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAt) return deepest;
      }
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return deepest;
}

/**
 * JSON.parse of `text`, refused with a SyntaxError that says so when its
 * arrays and objects nest deeper than `maxDepth` (MAX_JSON_DEPTH): callers
 * that report a malformed payload report this one the same way, with the
 * reason. Throws JSON.parse's SyntaxError for text that is not JSON.
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (jsonDepth(text, maxDepth) > maxDepth) throw new SyntaxError(`JSON nested more than ${maxDepth} levels deep`);
  return JSON.parse(text) as unknown;
}
