/**
 * Output channels (seed 001 "Output Channel System"): capability flags, one
 * delivery to a channel, and the handler a channel registers. No IO here.
 */

/** Output channel capability flags (seed 001 "Capability flags") plus Stream. */
export const Cap = {
  Text: 1,
  File: 2,
  Image: 4,
  Audio: 8,
  Structured: 16,
  /** Takes a reply sentence by sentence while the model still writes (the speaker). */
  Stream: 32,
} as const;

/**
 * One delivery to an output channel.
 * - kind 'full': a whole reply (non-stream channels, output_send__X calls, short-circuit responses).
 * - kind 'sentence': one sentence of a streamed reply (stream channels only).
 * - kind 'end': the streamed reply is complete; `content` is the whole text.
 */
export interface OutputMessage {
  channel: string;
  kind: 'full' | 'sentence' | 'end';
  content: string;
  /** output_send `type` (e.g. 'text', 'file', 'audio'); default 'text'. */
  type: string;
  /** output_send `meta` routing metadata. */
  meta: Record<string, unknown>;
  /** The input this reply answers, when there is one. */
  input_id?: string;
  /** True on an 'end' delivery when the reply was cut by stop or preemption. */
  interrupted?: boolean;
}

/** Handler of an output channel; resolves when the message is delivered (or queued for playback). */
export type OutputHandler = (msg: OutputMessage) => void | Promise<void>;

/** Options of registerOutputChannel. */
export interface OutputChannelOptions {
  /** Text returned by output_send__{name}_help. */
  help?: string;
  /** Allowed `type` values of output_send__{name}. */
  types?: string[];
  /**
   * The channel reaches only whoever made a request, while it waits (the
   * maintenance socket's `ask`): what outlives the request (a timer that
   * rings later, a reminder) is not sent there but to a lasting channel.
   */
  perRequest?: boolean;
}

/** What a plugin may learn about a registered channel (PluginSDK.outputChannel). */
export interface OutputChannelInfo {
  name: string;
  /** `Cap` flags OR-ed. */
  caps: number;
  /** See OutputChannelOptions.perRequest. */
  perRequest: boolean;
}

