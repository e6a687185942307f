/**
 * Typed errors of the STT engines (STYLE.md: a stable `code` and a message a
 * person can act on).
 */
import { HomeAgentError } from '../../kernel/errors.js';

/** The engine cannot run: binary or model missing (code STT_UNAVAILABLE; `cause` keeps the ENOENT). */
export class SttUnavailableError extends HomeAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STT_UNAVAILABLE', message, options);
  }
}

/** The engine ran but failed on this utterance (non-zero exit, unreadable output): code STT_FAILED. */
export class SttFailedError extends HomeAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STT_FAILED', message, options);
  }
}

/** The utterance was dropped with abort() (stop, barge-in): code STT_ABORTED. */
export class SttAbortedError extends HomeAgentError {
  constructor() {
    super('STT_ABORTED', 'speech recognition aborted');
  }
}

/** No grammar yet: setVocabulary() was never called or failed (code STT_NO_GRAMMAR). */
export class SttNoGrammarError extends HomeAgentError {
  constructor(message = 'the command grammar is not built yet: call setVocabulary() first') {
    super('STT_NO_GRAMMAR', message);
  }
}
