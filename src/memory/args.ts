/**
 * JSON Schema pieces for the memory and knowledge tools' arguments ("schemas
 * once", src/kernel/tool-schema.ts): each piece is part of the one schema
 * literal that ajv validates in the tool registry before a handler runs and
 * that `FromSchema` types the handler's arguments from. What used to be
 * re-checked by hand here (type, non-empty, length, range, integer) is now
 * in the schema; a bad argument is refused by the registry with an error
 * naming it (TOOL_ARGUMENTS_INVALID, e.g. `/query must be string`).
 *
 * Optional arguments also accept `null` as "absent", as the hand checks did
 * (small models send `null` for arguments they leave out).
 */

/** A required non-empty string of at most `max` characters (at least one non-space character; handlers trim it). */
export function text(max: number, description?: string) {
  return { type: 'string', minLength: 1, maxLength: max, pattern: '\\S', ...(description !== undefined ? { description } : {}) } as const;
}

/** An optional non-empty string of at most `max` characters; `null` counts as absent. */
export function optText(max: number, description?: string) {
  return { type: ['string', 'null'], minLength: 1, maxLength: max, pattern: '\\S', ...(description !== undefined ? { description } : {}) } as const;
}

/** An optional number in [min, max]; `null` counts as absent. */
export function optNumber(min: number, max: number, description?: string) {
  return { type: ['number', 'null'], minimum: min, maximum: max, ...(description !== undefined ? { description } : {}) } as const;
}

/** An optional integer in [min, max]; `null` counts as absent (handlers apply their default with `??`). */
export function optInt(min: number, max: number, description?: string) {
  return { type: ['integer', 'null'], minimum: min, maximum: max, ...(description !== undefined ? { description } : {}) } as const;
}
