/**
 * Typed HAL errors. Each carries a stable `code` (HomeAgentError) and a message
 * naming the device and the likely fix.
 */
import { HomeAgentError } from '../../src/kernel/errors.js';

/** Base class for hardware-layer errors (codes: HAL_BAD_MODE, HAL_BAD_CONFIG, ...). */
export class HalError extends HomeAgentError {}
