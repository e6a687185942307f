/**
 * The output side of one turn (src/kernel/turn.ts): what reaches the
 * input's channel and how the reply ends. In auto mode model text goes to a
 * stream channel (the speaker) sentence by sentence through before_output,
 * or whole to a text channel; explicit mode and consolidation deliver no
 * plain text (seed 000 §7, DESIGN.md "Output"). Each way a turn ends has its
 * finisher here, returning the outcome value and keeping `said` (the agent's
 * words for the memory window): a whole reply, a stage's answer, a stop, a
 * reply cut short (issue 14: the text that arrived, then one short ending in
 * the input's language) and the "cannot reach my language model" answer.
 * Every delivery is emitted as an `output` turn event.
 */
import type { KernelServices } from './services.js';
import type { StageContext, StageName } from './stage-types.js';
import type { CutReason, InputMessage } from './turn-types.js';
import type { FinalOutcome, TurnEvent } from './turn-events.js';
import type { StageInit } from './stages.js';
import { SentenceSplitter } from './sentences.js';
import { errorMessage } from './errors.js';
import { detectLanguage } from './language.js';
import { cutEnding } from './turn-endings.js';

/** InputMessage.meta key naming the channel, or channels in order, a reply goes to when the input's own channel is not registered (TurnOutput.deliver). */
export const FALLBACK_CHANNEL_META = 'fallback_channel';

/** What the output side asks of its turn. */
export interface TurnOutputHost {
  /** Run a stage on this turn's input. */
  stage(stage: StageName, init: StageInit): Promise<StageContext>;
  /** Emit one event on the turn stream. */
  emit(ev: TurnEvent): void;
  /** Whether stop was pressed. */
  stopped(): boolean;
}

/** Text of a streamed answer held back while it may be a JSON tool call (`holding` undecided until the first non-space character). */
export interface HoldState {
  held: string;
  holding: boolean | undefined;
}

/** The output side of one turn. */
export class TurnOutput {
  /** Sentences already handed to a stream channel in this turn. */
  streamed: string[] = [];
  /** Output mode, decided when the turn starts (core.output.mode). */
  mode: 'auto' | 'explicit' = 'auto';
  /** The agent's words for the memory window (turn.finished `said`). */
  said = '';

  constructor(
    private readonly input: InputMessage,
    private readonly k: KernelServices,
    private readonly host: TurnOutputHost,
  ) {}

  /** The stream channel model text goes to sentence by sentence (auto mode, a stream channel), else undefined. */
  streamChannel(): string | undefined {
    const ch = this.input.channel;
    return this.mode === 'auto' && ch !== '_consolidation_' && this.k.outputs.isStream(ch) ? ch : undefined;
  }

  /**
   * One content piece towards a stream channel: text that may open a JSON
   * tool call (`{`, `[`, a code fence) is held in `st` until the answer is
   * complete; other text goes through the sentence splitter, each finished
   * sentence to the channel.
   */
  async streamText(channel: string, text: string, splitter: SentenceSplitter, st: HoldState): Promise<void> {
    if (st.holding === undefined) {
      st.held += text;
      const t = st.held.trimStart();
      if (!t) return;
      st.holding = t.startsWith('{') || t.startsWith('```') || t.startsWith('[');
      if (st.holding) return;
      text = st.held;
      st.held = '';
    } else if (st.holding) {
      st.held += text;
      return;
    }
    for (const s of splitter.push(text)) await this.deliverSentence(channel, s);
  }

  /** One sentence of a streamed reply: before_output (partial) -> channel. */
  async deliverSentence(channel: string, sentence: string): Promise<void> {
    if (this.host.stopped()) return;
    const c = await this.host.stage('before_output', { final_text: sentence, partial: true });
    if (c.skip_output || !c.final_text) return;
    this.streamed.push(c.final_text);
    await this.deliver(channel, 'sentence', c.final_text);
  }

  async finishWithText(text: string): Promise<FinalOutcome> {
    const k = this.k;
    const channel = this.input.channel;
    if (this.mode === 'explicit' || channel === '_consolidation_') {
      // Plain text reaches no channel here: it is the model's reasoning, kept in the memory window.
      this.said = text;
      await this.afterOutput(text);
      return { kind: 'reply', reply: '' };
    }
    if (k.outputs.isStream(channel)) {
      const full = this.streamed.join(' ');
      if (this.streamed.length > 0) await this.deliver(channel, 'end', full);
      this.said = full;
      await this.afterOutput(full);
      return { kind: 'reply', reply: full };
    }
    const c = await this.host.stage('before_output', { final_text: text });
    if (c.response !== undefined) return this.finishShortCircuit(c.response, 'before_output');
    let delivered = '';
    if (!c.skip_output && c.final_text) {
      delivered = c.final_text;
      await this.deliver(channel, 'full', delivered);
    }
    this.said = delivered;
    await this.afterOutput(delivered);
    return { kind: 'reply', reply: delivered };
  }

  /** A stage's `response` (with its `response_meta`, on_input only) is the reply. */
  async finishShortCircuit(response: string, stage: StageName, meta?: Record<string, unknown>): Promise<FinalOutcome> {
    if (response && this.input.channel !== '_consolidation_') await this.deliver(this.input.channel, 'full', response, false, meta);
    this.said = response;
    await this.afterOutput(response);
    return { kind: 'short_circuit', reply: response, stage };
  }

  /** The stop unwind: end a streamed reply as interrupted and keep what was said before the stop. */
  async finishInterrupted(): Promise<FinalOutcome> {
    const full = this.streamed.join(' ');
    if (this.k.outputs.isStream(this.input.channel) && this.streamed.length > 0) await this.deliver(this.input.channel, 'end', full, true);
    this.host.emit({ type: 'turn.interrupted', turn: this.input.id, cancelled: false });
    this.said = full;
    await this.afterOutput(full);
    return { kind: 'interrupted', reply: full, cancelled: false };
  }

  /**
   * A reply that ended early for `reason` (not a stop): what was delivered
   * stays, the arrived text no channel got (`rest`) goes to the channel
   * (on a stream channel its whole sentences; an unfinished one is not spoken),
   * then one short ending in the input's language. The memory window gets
   * the model's text that arrived (`said`), marked with the reason by the
   * outcome.
   */
  async finishCutShort(reason: CutReason, rest: string, message: string): Promise<FinalOutcome> {
    const k = this.k;
    const channel = this.input.channel;
    const ending = cutEnding(reason, this.input.text, k.settings.get<number>('core.agent.max_tool_calls'));
    const kept = rest.trim();
    if (channel === '_consolidation_' || this.mode === 'explicit') {
      // Plain text reached no channel (it is the model's reasoning here); the input's channel still hears why the answer stopped.
      if (channel !== '_consolidation_') await this.deliver(channel, 'full', ending);
      this.said = kept;
      await this.afterOutput(kept);
      return { kind: 'cut_short', reply: channel === '_consolidation_' ? '' : ending, reason, message };
    }
    if (k.outputs.isStream(channel)) {
      // The arrived text no channel got yet: its whole sentences are spoken (the splitter was only waiting for
      // what follows them), an unfinished one is not, except before tool calls, where the text is whole.
      const whole = reason === 'tool_call_limit' ? (kept ? [kept] : []) : new SentenceSplitter().push(`${kept} `);
      for (const s of whole) await this.deliverSentence(channel, s);
      const spoken = this.streamed.join(' ');
      if (!this.host.stopped()) await this.deliver(channel, 'sentence', ending);
      const reply = [spoken, ending].filter(Boolean).join(' ');
      await this.deliver(channel, 'end', reply);
      this.said = [spoken, kept].filter(Boolean).join(' ');
      await this.afterOutput(this.said);
      return { kind: 'cut_short', reply, reason, message };
    }
    let text = kept;
    if (text) {
      const c = await this.host.stage('before_output', { final_text: text });
      text = c.skip_output ? '' : c.final_text;
    }
    const reply = [text, ending].filter(Boolean).join(' ');
    await this.deliver(channel, 'full', reply);
    this.said = kept;
    await this.afterOutput(kept);
    return { kind: 'cut_short', reply, reason, message };
  }

  async llmUnavailable(err: unknown): Promise<FinalOutcome> {
    const k = this.k;
    k.log.error({ input: this.input.id, err: errorMessage(err) }, 'LLM call failed');
    this.host.emit({ type: 'error', turn: this.input.id, where: 'llm', message: errorMessage(err) });
    const zh = detectLanguage(this.input.text) === 'zh';
    const unavailable = k.settings.get<string>(zh ? 'core.agent.llm_unavailable_message_zh' : 'core.agent.llm_unavailable_message');
    // "this is Anna" was taken (the speaker is Anna from now on) even with no model to answer: the reply says so first
    // (a newcomer read the bare "can't reach" as the introduction failing).
    const who = this.input.user_via === 'said' ? this.input.user : undefined;
    const msg = who ? `${zh ? `你好，${who}。` : `Hello, ${who}.`} ${unavailable}` : unavailable;
    if (this.input.channel !== '_consolidation_') await this.deliver(this.input.channel, 'full', msg);
    this.said = msg;
    await this.afterOutput(msg);
    return { kind: 'error', reply: msg, message: errorMessage(err) };
  }

  /**
   * Hand `content` to `channel` (a failing channel is logged) and emit the `output` event. A channel that is not
   * registered gives way to the input's `meta.fallback_channel` (FALLBACK_CHANNEL_META: a channel, or channels in
   * order), the first of them that is: a timer set on the console that fell due while the box was off rang nowhere
   * when it started with --no-console.
   */
  async deliver(requested: string, kind: 'full' | 'sentence' | 'end', content: string, interrupted = false, meta: Record<string, unknown> = {}): Promise<void> {
    const fallback = this.input.meta?.[FALLBACK_CHANNEL_META];
    const fallbacks = typeof fallback === 'string' ? [fallback] : Array.isArray(fallback) ? fallback.filter((c): c is string => typeof c === 'string') : [];
    const channel = this.k.outputs.get(requested) ? requested : (fallbacks.find((c) => this.k.outputs.get(c)) ?? requested);
    try {
      await this.k.outputs.send({ channel, kind, content, type: 'text', meta: { ...meta }, input_id: this.input.id, ...(interrupted ? { interrupted } : {}) });
    } catch (err) {
      this.k.log.warn({ channel, kind, err: errorMessage(err) }, 'reply delivery failed');
    }
    this.host.emit({ type: 'output', turn: this.input.id, channel, kind, content, ...(interrupted ? { interrupted } : {}) });
  }

  async afterOutput(text: string): Promise<void> {
    await this.host.stage('after_output', { final_text: text });
  }
}
