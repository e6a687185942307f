/**
 * Test helpers of the provider suites: a capturing Logger and paths (in-memory
 * settings are test/support/fake-sdk.ts FakeSettings).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../src/kernel/log-types.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const adaptersDir = path.join(repoRoot, 'adapters');


/** One captured log line. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: unknown;
  msg?: string;
}

/** A Logger that records lines (inspect `lines`). */
export function captureLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const mk = (bindings: Record<string, unknown>): Logger & { lines: LogLine[] } => ({
    lines,
    debug: (obj, msg) => lines.push({ level: 'debug', obj: { ...bindings, ...(obj as object) }, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj: { ...bindings, ...(obj as object) }, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj: { ...bindings, ...(obj as object) }, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj: { ...bindings, ...(obj as object) }, msg }),
    child: (b) => mk({ ...bindings, ...b }),
  });
  return mk({});
}

/** Collects every event of a stream. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}
