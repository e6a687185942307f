/**
 * Typed provider errors (issue 3: "a typed error within the configured
 * timeout, the next source tried, no crash"). Every failure of an LLM call is
 * one of these; the provider manager decides from the class what to do
 * (fail over, mark unusable, retry without tools, rethrow an abort).
 */
import { STATUS_CODES } from 'node:http';
import { HomeAgentError } from '../kernel/errors.js';

/**
 * Base class. Codes: PROVIDER_FAILED (generic), HTTP_STATUS, AUTH_FAILED,
 * TOOLS_UNSUPPORTED, TIMEOUT, CONNECTION_FAILED, TRUNCATED_STREAM,
 * MALFORMED_RESPONSE, STREAM_ERROR, ABORTED, ALL_SOURCES_FAILED, NO_SOURCE.
 */
export class ProviderError extends HomeAgentError {
  /** The source (core.llm.sources.<name>) the error came from, when known. */
  source?: string;
  constructor(code: string, message: string, options?: { cause?: unknown; source?: string }) {
    super(code, message, options);
    this.source = options?.source;
  }
}

/** The server answered with a non-2xx status. `body` is the first 2 KiB of the error body. */
export class HttpStatusError extends ProviderError {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: string,
    options?: { source?: string; code?: string },
  ) {
    super(options?.code ?? 'HTTP_STATUS', `HTTP ${status}: ${statusDetail(status, detail)}`, { source: options?.source });
  }
}

/**
 * The detail of an HTTP error message: `detail` as the server (or the
 * adapter's transform_error) gave it, or, when that says nothing more than
 * the status (empty, "null", "{}", or "HTTP 404" as the bundled adapters
 * write for an empty body), the status's reason phrase and that the body
 * was empty: "Not Found (no detail in the response)". A tester's LLM error
 * read "HTTP 404: HTTP 404". Control characters become spaces and a detail
 * over MAX_DETAIL characters is cut.
 */
export function statusDetail(status: number, detail: string): string {
  // Control characters (escapes, bells, NULs from a body) never reach a terminal; a long body (an HTML page) is cut.
  const d = htmlText(detail).replace(/[\p{Cc}\p{Cf}]+/gu, ' ').replace(/\s+/g, ' ').trim();
  if (d && d.toUpperCase() !== `HTTP ${status}` && !EMPTY_BODIES.has(d)) return d.length > MAX_DETAIL ? `${d.slice(0, MAX_DETAIL)}… (${d.length} characters)` : d;
  return `${STATUS_CODES[status] ?? 'error'} (no detail in the response)`;
}

/**
 * An HTML page (a proxy's or web server's error page) as the words a person
 * would read first: its title, else its first heading, else its text without
 * tags; any other body unchanged. A tester's 401 printed 5182 characters of
 * <html><head><title>401 Authorization Required</title>... and script.
 */
function htmlText(body: string): string {
  if (!/<\s*(?:!doctype\s+html|html|head|body|title)\b/i.test(body)) return body;
  const strip = (x: string): string => x.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<[^>]*>/g, ' ').replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  const heading = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(body)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1\s*>/i.exec(body)?.[1];
  const words = strip(heading ?? body).replace(/\s+/g, ' ').trim();
  return words ? (heading ? `${words} (an HTML page)` : words) : '';
}

/** Bodies that say nothing: JSON null, an empty object, list or string. */
const EMPTY_BODIES: ReadonlySet<string> = new Set(['null', '{}', '[]', '""']);
/** Longest error detail kept in a message, characters (a tester's 20 KB HTML page was printed whole). */
const MAX_DETAIL = 300;

/** HTTP 401/403: the key is missing, wrong or lacks rights. The source stays unusable until its settings change. */
export class AuthError extends HttpStatusError {
  constructor(status: number, detail: string, body: string, options?: { source?: string }) {
    super(status, detail, body, { source: options?.source, code: 'AUTH_FAILED' });
  }
}

/**
 * The model rejected the request because it cannot use tools (Ollama's HTTP
 * 400 "<model> does not support tools", native `{"error": "..."}` or /v1
 * `{"error": {"message": ...}}` body). The manager retries once without tools.
 */
export class ToolsUnsupportedError extends ProviderError {
  constructor(readonly model: string, readonly detail: string, options?: { source?: string }) {
    super('TOOLS_UNSUPPORTED', `model ${model} does not support tools (${detail})`, { source: options?.source });
  }
}

/** No answer (connect, first byte, or between stream chunks) within `ms`. */
export class ProviderTimeoutError extends ProviderError {
  constructor(readonly phase: 'connect' | 'response' | 'idle', readonly ms: number, options?: { source?: string }) {
    super('TIMEOUT', `LLM ${phase} timed out after ${ms} ms`, { source: options?.source });
  }
}

/** The TCP connection failed (refused, reset, DNS) before a complete answer. */
export class ConnectionError extends ProviderError {
  constructor(detail: string, options?: { cause?: unknown; source?: string }) {
    super('CONNECTION_FAILED', `connection failed: ${detail}`, options);
  }
}

/** The stream ended (connection closed) before its final chunk. `partial` is the text received so far. */
export class TruncatedStreamError extends ProviderError {
  constructor(readonly partial: string, detail: string, options?: { source?: string }) {
    super('TRUNCATED_STREAM', `stream ended before it was complete: ${detail}`, { source: options?.source });
  }
}

/** A body or line could not be understood (bad JSON, adapter failure on the data). */
export class MalformedResponseError extends ProviderError {
  constructor(detail: string, options?: { cause?: unknown; source?: string }) {
    super('MALFORMED_RESPONSE', `malformed LLM response: ${detail}`, options);
  }
}

/** The server reported an error inside a 200 response or mid-stream (`{"error": ...}`). */
export class StreamErrorReported extends ProviderError {
  constructor(detail: string, options?: { source?: string }) {
    super('STREAM_ERROR', `LLM server reported: ${detail}`, options);
  }
}

/**
 * The caller aborted (stop button, preemption). `name` is 'AbortError' like
 * DOMException's, so `err.name === 'AbortError'` checks work. Never retried.
 */
export class ProviderAbortError extends ProviderError {
  constructor(options?: { cause?: unknown; source?: string }) {
    super('ABORTED', 'LLM call aborted', options);
    this.name = 'AbortError';
  }
}

/** Every configured source failed; `errors` holds each source's error in order. */
export class AllSourcesFailedError extends ProviderError {
  constructor(readonly errors: ProviderError[]) {
    super(
      errors.length ? 'ALL_SOURCES_FAILED' : 'NO_SOURCE',
      errors.length
        ? `all LLM sources failed: ${errors.map((e) => `${e.source ?? '?'}: ${e.message}`).join('; ')}`
        : 'no usable LLM source is configured (core.llm.sources_order)',
    );
  }
}

/** True for anything that means "the caller aborted". */
export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR' || (err as { code?: string }).code === 'ABORTED');
}
