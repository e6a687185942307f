/**
 * Output channels (seed 001 "Output Channel System"): each registered channel
 * gets two tools, `output_send__{name}` (payload, meta, type) and
 * `output_send__{name}_help`. Capability flags are the seed's plus Stream (32).
 * Delivery itself (with before_output/after_output) is the turn's job; this
 * module keeps the channels and calls their handlers in isolation.
 */
import type { Logger } from './log-types.js';
import type { OutputChannelOptions, OutputHandler, OutputMessage } from './output-types.js';
import { Cap } from './output-types.js';
import { HomeAgentError, errorMessage } from './errors.js';

/** A registered channel. */
export interface OutputChannel {
  name: string;
  caps: number;
  description: string;
  owner: string;
  handler: OutputHandler;
  help: string;
  types: string[];
  /** OutputChannelOptions.perRequest. */
  perRequest: boolean;
}

/** No channel of that name. */
export class UnknownChannelError extends HomeAgentError {
  constructor(readonly channel: string) {
    super('OUTPUT_CHANNEL_UNKNOWN', `no output channel "${channel}"`);
  }
}

/** Names of capability flags set in `caps`. */
export function capNames(caps: number): string[] {
  return Object.entries(Cap)
    .filter(([, v]) => (caps & v) !== 0)
    .map(([k]) => k.toLowerCase());
}

/** The channel registry. */
export class OutputRegistry {
  private readonly channels = new Map<string, OutputChannel>();
  constructor(private readonly log: Logger) {}

  register(owner: string, name: string, caps: number, description: string, handler: OutputHandler, opts: OutputChannelOptions = {}): OutputChannel {
    if (!/^[a-z0-9_][a-z0-9_-]{0,40}$/.test(name)) throw new HomeAgentError('OUTPUT_CHANNEL_NAME', `channel name "${name}" must be lower-case letters, digits, _ or -`);
    const existing = this.channels.get(name);
    if (existing) throw new HomeAgentError('OUTPUT_CHANNEL_DUPLICATE', `output channel "${name}" is already registered by ${existing.owner}`);
    const types = opts.types ?? ['text'];
    const help =
      opts.help ??
      `Channel "${name}": ${description}\nCapabilities: ${capNames(caps).join(', ')}.\nCall output_send__${name} with payload (the content), type (one of: ${types.join(', ')}) and optional meta (a JSON object of routing metadata).`;
    const ch: OutputChannel = { name, caps, description, owner, handler, help, types, perRequest: opts.perRequest === true };
    this.channels.set(name, ch);
    return ch;
  }

  get(name: string): OutputChannel | undefined {
    return this.channels.get(name);
  }

  names(): string[] {
    return [...this.channels.keys()];
  }

  all(): OutputChannel[] {
    return [...this.channels.values()];
  }

  isStream(name: string): boolean {
    const c = this.channels.get(name);
    return !!c && (c.caps & Cap.Stream) !== 0;
  }

  removeOwner(owner: string): string[] {
    const removed: string[] = [];
    for (const [n, c] of this.channels) {
      if (c.owner === owner) {
        this.channels.delete(n);
        removed.push(n);
      }
    }
    return removed;
  }

  /** Call the channel's handler. Throws UnknownChannelError; a handler failure is logged and rethrown as OUTPUT_FAILED. */
  async send(msg: OutputMessage): Promise<void> {
    const ch = this.channels.get(msg.channel);
    if (!ch) throw new UnknownChannelError(msg.channel);
    try {
      await ch.handler(msg);
    } catch (err) {
      this.log.error({ channel: msg.channel, err: errorMessage(err) }, 'output channel failed');
      throw new HomeAgentError('OUTPUT_FAILED', `output channel ${msg.channel} failed: ${errorMessage(err)}`, { cause: err });
    }
  }
}
