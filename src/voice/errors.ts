/**
 * Typed errors of the voice pipeline (STYLE.md: a stable `code` plus a
 * message a person can act on). Timeouts use the kernel's `TimeoutError`
 * (code TIMEOUT).
 */
import { HomeAgentError } from '../kernel/errors.js';

/** A Wyoming frame could not be decoded (bad header JSON, bad lengths, truncated stream). Code WYOMING_BAD_FRAME. */
export class WyomingProtocolError extends HomeAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('WYOMING_BAD_FRAME', `Wyoming protocol: ${message}`, options);
  }
}

/** A Wyoming service could not be reached (refused, unreachable, DNS). Code WYOMING_CONNECT. */
export class WyomingConnectError extends HomeAgentError {
  constructor(readonly host: string, readonly port: number, options?: { cause?: unknown }) {
    const why = options?.cause instanceof Error ? options.cause.message : 'connection failed';
    super('WYOMING_CONNECT', `cannot reach Wyoming service at ${host}:${port} (${why}); is it running?`, options);
  }
}

/** The Wyoming service closed the connection before answering. Code WYOMING_CLOSED. */
export class WyomingClosedError extends HomeAgentError {
  constructor(what: string) {
    super('WYOMING_CLOSED', `Wyoming service closed the connection while waiting for ${what}`);
  }
}

/** The Wyoming service answered with an `error` event (rhasspy/wyoming error.py: text, code). Code WYOMING_ERROR. */
export class WyomingServiceError extends HomeAgentError {
  constructor(readonly serviceText: string, readonly serviceCode?: string) {
    super('WYOMING_ERROR', `Wyoming service error${serviceCode ? ` (${serviceCode})` : ''}: ${serviceText}`);
  }
}

/** A TTS engine failed (missing binary, non-zero exit, unsupported audio format). Code TTS_FAILED. */
export class TtsError extends HomeAgentError {
  constructor(readonly engine: string, message: string, options?: { cause?: unknown }) {
    super('TTS_FAILED', `TTS ${engine}: ${message}`, options);
  }
}

/** An operation was aborted through its AbortSignal (stop, barge-in). Code ABORTED. */
export class VoiceAbortError extends HomeAgentError {
  constructor(what: string) {
    super('ABORTED', `${what} was aborted`);
  }
}
