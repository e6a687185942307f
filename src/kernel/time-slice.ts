/**
 * Cooperative time slicing for long synchronous work on the service's one
 * event loop (a memory loop distilling a thousand queued utterances, each a
 * SQLite transaction). Work done in one stretch holds back everything else:
 * a stop button's press, the LLM socket to close, a player to kill (issue 4:
 * a stop within 10 ms). Measured with the stop bench and a CPU profile: the
 * rules loop's tick, 1000 utterances in one stretch, held the event loop for
 * 400 ms. Such work awaits `pace()` between items: while the slice has time
 * left it goes on; past the budget it yields one turn of the event loop
 * (setImmediate, so I/O already waiting is served first) and starts a new slice.
 */

/** Longest stretch of sliced work between two turns of the event loop (ms). */
export const SLICE_BUDGET_MS = 4;

/** One piece of sliced work (see module comment); make one per task. */
export class TimeSlice {
  private start = performance.now();
  /** Turns of the event loop given up so far (for tests and logs). */
  yields = 0;

  /** @param budgetMs the longest stretch in ms (0: yield between every two items). */
  constructor(private readonly budgetMs = SLICE_BUDGET_MS) {}

  /** Resolves at once while the slice has time left, else after one turn of the event loop. */
  async pace(): Promise<void> {
    if (performance.now() - this.start < this.budgetMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.yields++;
    this.start = performance.now();
  }
}
