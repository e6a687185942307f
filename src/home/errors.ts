/**
 * Typed errors of the smart-home part. Every error has a stable `code`
 * (HomeAgentError) and a message a person can act on.
 */
import { HomeAgentError } from '../kernel/errors.js';

/**
 * A device command could not be carried out.
 * Codes: DEVICE_NOT_FOUND, DEVICE_UNAVAILABLE, UNSUPPORTED_ACTION,
 * BAD_ARGUMENT, COMMAND_TIMEOUT (broker did not acknowledge within the
 * timeout), COMMAND_FAILED (broker refused / client closed), NOT_CONFIRMED
 * (a risky action the user did not confirm), MQTT_NOT_STARTED.
 */
export class HomeError extends HomeAgentError {
  constructor(code: HomeErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The codes HomeError uses. */
export type HomeErrorCode =
  | 'DEVICE_NOT_FOUND'
  | 'DEVICE_UNAVAILABLE'
  | 'UNSUPPORTED_ACTION'
  | 'BAD_ARGUMENT'
  | 'COMMAND_TIMEOUT'
  | 'COMMAND_FAILED'
  | 'NOT_CONFIRMED'
  | 'MQTT_NOT_STARTED'
  /** The broker has been out of reach too long to wait for it (mqtt-client.ts BROKER_DOWN_FAIL_MS): nothing was sent. */
  | 'BROKER_UNREACHABLE';
