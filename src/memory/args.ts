/**
 * Argument readers for tool handlers: narrow `unknown` tool arguments and
 * throw MemoryArgumentError (code MEMORY_BAD_ARGS) with a message the model
 * can act on.
 */
import { MemoryArgumentError } from './errors.js';

/** A required non-empty string argument (trimmed), at most `max` characters. Throws MemoryArgumentError. */
export function reqString(tool: string, args: Record<string, unknown>, key: string, max = 10000): string {
  const v = args[key];
  if (typeof v !== 'string' || v.trim() === '') throw new MemoryArgumentError(tool, `"${key}" must be a non-empty string`);
  if (v.length > max) throw new MemoryArgumentError(tool, `"${key}" is longer than ${max} characters`);
  return v.trim();
}

/** An optional string argument; undefined when absent. Throws MemoryArgumentError on another type. */
export function optString(tool: string, args: Record<string, unknown>, key: string, max = 10000): string | undefined {
  if (args[key] === undefined || args[key] === null) return undefined;
  return reqString(tool, args, key, max);
}

/** An optional number in [min, max]; `fallback` when absent. Throws MemoryArgumentError. */
export function optNumber(tool: string, args: Record<string, unknown>, key: string, min: number, max: number, fallback?: number): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new MemoryArgumentError(tool, `"${key}" must be a number from ${min} to ${max}`);
  return v;
}

/** An optional integer in [min, max]; `fallback` when absent. Throws MemoryArgumentError. */
export function optInt(tool: string, args: Record<string, unknown>, key: string, min: number, max: number, fallback: number): number {
  const v = optNumber(tool, args, key, min, max, fallback) ?? fallback;
  if (!Number.isInteger(v)) throw new MemoryArgumentError(tool, `"${key}" must be an integer`);
  return v;
}
