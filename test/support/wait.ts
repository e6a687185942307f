/**
 * Waiting in tests without making time part of the outcome: a test waits
 * for a condition or an event; the deadline here only turns a hang into a
 * clear failure and is never what makes a test pass (tests use the FakeClock
 * for rules about time).
 */

/** Failure deadline of waitUntil, ms: generous, so a loaded machine is never mistaken for a bug. */
export const WAIT_DEADLINE_MS = 20_000;

/**
 * Resolves once `cond()` is true, checking every few ms; rejects with
 * "timed out waiting for <what>" after `deadlineMs` (a failure deadline).
 */
export async function waitUntil(cond: () => boolean, what: string, deadlineMs = WAIT_DEADLINE_MS): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resolves after every callback already queued on the event loop (immediates, I/O) has run once: one turn, not a duration. */
export function nextTurn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
