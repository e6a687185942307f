/**
 * Errors of the Lua VM. Every Lua failure surfaces as one `AdapterError`
 * naming the script and, when known, the line (issue 3: "a clear AdapterError
 * naming the script and line for any Lua error").
 */
import { HomeAgentError } from '../kernel/errors.js';

/**
 * A Lua script failed: syntax error, runtime error, instruction/time budget
 * exhausted, or a host function misused.
 * Codes: ADAPTER_SYNTAX (load), ADAPTER_RUNTIME (a Lua error),
 * ADAPTER_BUDGET (instruction or time budget exceeded), ADAPTER_MISSING
 * (function or field absent), ADAPTER_RESULT (result of the wrong shape).
 */
export class AdapterError extends HomeAgentError {
  /** Script as named in messages, e.g. `adapters/ollama.lua`. */
  readonly script: string;
  /** 1-based line in the script, when the error points to one. */
  readonly line?: number;
  /** The function that was called (`transform_stream_chunk`), when any. */
  readonly fn?: string;
  /** The Lua traceback, when one was available. */
  readonly traceback?: string;

  constructor(
    code: 'ADAPTER_SYNTAX' | 'ADAPTER_RUNTIME' | 'ADAPTER_BUDGET' | 'ADAPTER_MISSING' | 'ADAPTER_RESULT',
    info: { script: string; line?: number; fn?: string; detail: string; traceback?: string },
    options?: { cause?: unknown },
  ) {
    const where = info.line !== undefined ? `${info.script}:${info.line}` : info.script;
    const inFn = info.fn ? ` in ${info.fn}` : '';
    super(code, `Lua error at ${where}${inFn}: ${info.detail}`, options);
    this.script = info.script;
    this.line = info.line;
    this.fn = info.fn;
    this.traceback = info.traceback;
  }
}
