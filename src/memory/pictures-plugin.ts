/**
 * PicturesPlugin (issue 18 "Pictures"): what the model looks at is
 * remembered. It follows the turn events on the bus (src/kernel/turn-events.ts):
 * - `turn.started` with images (given with the input, e.g. from the WebUI):
 *   each is stored (PictureStore.put) with source `turn:<plugin>` and the turn;
 * - `llm.requested` / `context.projected` carrying a tool's images (the
 *   kernel adds them as a user message "[image returned by <tool>]"): stored
 *   with the turn; a camera snapshot the camera plugin stored already is
 *   the same bytes and the same turn, so no second file and no second entry.
 *   Images `picture_show` brings back are already remembered and are skipped;
 * - the next `llm.completed` of that turn with text: that text is the
 *   description of the pictures it looked at (unless the camera captioned them);
 * - the kernel's own turns (`isSelfInput`) are never recorded.
 * Work runs in arrival order on one queue ({@link PicturesPlugin.idle} waits for it).
 * A background pass keeps the size budget and removes orphaned files: once at
 * start and every `pruneIntervalMs` (default one hour) on the injected clock.
 */
import { systemClock, type Clock, type TimerHandle } from '../kernel/clock.js';
import { errorMessage } from '../kernel/errors.js';
import type { ChatMessage } from '../kernel/llm-types.js';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import { isSelfInput } from '../kernel/turn-types.js';
import type { PictureStore } from './pictures.js';

/** The kernel's note before a tool's images (src/kernel/turn.ts toolLoop). */
const TOOL_IMAGE_NOTE = /^\[image returned by ([\w.-]+)\]/;

/** Tools whose images are remembered pictures already (not stored again). */
const ALREADY_REMEMBERED = new Set(['picture_show']);

/** Constructor options. */
export interface PicturesPluginOptions {
  pictures: PictureStore;
  /** Timer source (tests: FakeClock). */
  clock?: Clock;
  /** Background prune interval, ms (default 3 600 000). */
  pruneIntervalMs?: number;
}

/** See the module comment. */
export class PicturesPlugin implements Plugin {
  readonly name = 'pictures';
  private readonly clock: Clock;
  private sdk: PluginSDK | undefined;
  private chain: Promise<void> = Promise.resolve();
  private timer: TimerHandle | undefined;
  /** Turns of the kernel's own inputs (not recorded). */
  private readonly self = new Set<string>();
  /** Entries each turn showed the model that wait for its words. */
  private readonly pending = new Map<string, number[]>();

  constructor(private readonly opts: PicturesPluginOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    sdk.subscribe('turn.started', (ev) => {
      if (isSelfInput(ev.input)) {
        this.self.add(ev.turn);
        return;
      }
      for (const b64 of ev.input.images ?? []) this.enqueue(() => this.store(ev.turn, b64, `turn:${ev.input.source}`, ev.input.received_at));
    });
    sdk.subscribe('llm.requested', (ev) => this.fromMessages(ev.turn, ev.appended));
    sdk.subscribe('context.projected', (ev) => this.fromMessages(ev.turn, ev.messages));
    sdk.subscribe('llm.completed', (ev) => {
      const text = ev.response.content ?? '';
      if (this.self.has(ev.turn) || text.trim() === '') return;
      this.enqueue(() => {
        const ids = this.pending.get(ev.turn);
        if (!ids || ids.length === 0) return;
        this.pending.delete(ev.turn);
        this.opts.pictures.describe(ids, text);
      });
    });
    sdk.subscribe('turn.finished', (ev) => {
      this.enqueue(() => {
        this.self.delete(ev.turn);
        this.pending.delete(ev.turn);
      });
    });
    this.enqueue(() => void this.opts.pictures.prune());
    this.arm();
  }

  async stop(): Promise<void> {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.sdk = undefined;
    await this.idle();
  }

  /** Resolves when the work queued so far (stores, descriptions, prunes) is done. */
  idle(): Promise<void> {
    return this.chain;
  }

  private arm(): void {
    if (!this.sdk) return;
    this.timer = this.clock.setTimeout(() => {
      this.enqueue(() => void this.opts.pictures.prune());
      this.arm();
    }, this.opts.pruneIntervalMs ?? 3_600_000);
  }

  private fromMessages(turn: string, messages: readonly ChatMessage[]): void {
    if (this.self.has(turn)) return;
    for (const m of messages) {
      if (m.role !== 'user' || !m.images?.length) continue;
      const tool = TOOL_IMAGE_NOTE.exec(m.content ?? '')?.[1];
      // The input's own images were stored at turn.started.
      if (!tool || ALREADY_REMEMBERED.has(tool)) continue;
      for (const b64 of m.images) this.enqueue(() => this.store(turn, b64, `tool:${tool}`, this.clock.now()));
    }
  }

  private async store(turn: string, b64: string, source: string, time: number): Promise<void> {
    const { entry } = await this.opts.pictures.put(Buffer.from(b64, 'base64'), { source, turn, time });
    if (entry.described_by !== 'default') return;
    const ids = this.pending.get(turn) ?? [];
    if (!ids.includes(entry.id)) ids.push(entry.id);
    this.pending.set(turn, ids);
  }

  private enqueue(work: () => void | Promise<void>): void {
    this.chain = this.chain
      .then(work)
      .catch((err: unknown) => this.sdk?.log.warn({ err: errorMessage(err) }, 'picture not stored'));
  }
}
