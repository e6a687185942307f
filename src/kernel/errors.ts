/**
 * Typed errors at module boundaries. Every error carries a stable `code` a
 * program can switch on and a message a person can act on (STYLE.md).
 */

/** Base class: `code` is a SCREAMING_SNAKE identifier, stable across releases. */
export class HomeAgentError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A tool name is already registered (by `owner`). */
export class DuplicateToolError extends HomeAgentError {
  constructor(readonly tool: string, readonly owner: string) {
    super('DUPLICATE_TOOL', `tool "${tool}" is already registered by plugin "${owner}"`);
  }
}

/** A stage handler wrote a field its stage does not allow (seed 000 §3 rights table). */
export class StageAccessError extends HomeAgentError {
  constructor(readonly stage: string, readonly field: string) {
    super('STAGE_ACCESS', `stage ${stage} may not write "${field}"`);
  }
}

/** A setting key is unknown or a value has the wrong type. */
export class ConfigError extends HomeAgentError {
  constructor(readonly key: string, message: string) {
    super('CONFIG_INVALID', `setting ${key}: ${message}`);
  }
}

/** A plugin failed to start or stop; the others go on. */
export class PluginError extends HomeAgentError {
  constructor(readonly plugin: string, message: string, options?: { cause?: unknown }) {
    super('PLUGIN_FAILED', `plugin ${plugin}: ${message}`, options);
  }
}

/** An operation timed out after `ms`. */
export class TimeoutError extends HomeAgentError {
  constructor(what: string, readonly ms: number) {
    super('TIMEOUT', `${what} timed out after ${ms} ms`);
  }
}

/** Render anything thrown as a one-line message. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
