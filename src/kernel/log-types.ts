/**
 * The structured logger interface every module takes (a pino-compatible
 * subset; `log.ts` makes the real one). No IO here.
 */

/** A structured logger (pino-compatible subset). */
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

