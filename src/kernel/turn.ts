/**
 * One turn: the processing of one input through the seven stages and the tool
 * loop (seed 000 §3 and §7, seed 001 "Message Processing Flow"):
 *
 *   on_input -> context append/prune/recall -> pre_action ->
 *   [LLM -> post_action -> (before_toolcall -> execute -> after_toolcall)*]* ->
 *   before_output -> deliver -> after_output
 *
 * A `response` set at any stage short-circuits to the input's channel and
 * after_output. A turn is resumable: when a higher interrupt preempts it, it
 * stops at the LLM boundary, keeps its frame (messages, round) and continues
 * from there later, with "[interrupt] ..." notes before its next LLM call
 * (seed 001 three delivery paths). A stop ends it as interrupted, never retried.
 */
import type { ChatMessage, CompletionResponse, Provider, ToolCall } from './llm-types.js';
import type { MemItem } from './memory-types.js';
import type { StageContext, StageName } from './stage-types.js';
import type { InputMessage, TurnResult } from './turn-types.js';
import type { KernelServices } from './services.js';
import { newStageContext, type StageInit } from './stages.js';
import { SentenceSplitter } from './sentences.js';
import { computeTokenBudget, messagesTokens, outputRules, timelineMessages } from './prompt.js';
import { errorMessage } from './errors.js';
import { estimateTokens } from './memory-port.js';
import { ProjectionTracker, type RunEvent } from './run-log.js';

/** Why the in-flight work was aborted. */
export type AbortReason = 'stop' | 'preempt';

/** Marker thrown inside the turn to unwind on a short-circuit. */
class ShortCircuit {
  constructor(readonly response: string, readonly stage: StageName) {}
}

/** The resumable state of a turn (its "frame"). */
interface Frame {
  started: boolean;
  messages: ChatMessage[];
  round: number;
  lastText: string;
  memory: MemItem[];
  recalledIds: Set<string>;
}

/** Outcome of run(): finished, or preempted and to be resumed. */
export type RunOutcome = { kind: 'finished'; result: TurnResult } | { kind: 'preempted' };

/** One input's processing. */
export class Turn {
  readonly result: TurnResult;
  private readonly frame: Frame = { started: false, messages: [], round: 0, lastText: '', memory: [], recalledIds: new Set() };
  private controller?: AbortController;
  private abortReason?: AbortReason;
  private preemptRequested = false;
  private stopped = false;
  /** Aborted by stop(); stage handlers see it as `ctx.signal`. */
  private readonly stopSignal = new AbortController();
  /** Set by the agent when a stop snapshot included this input (seed 001 cancelBudget). */
  cancelledByStop = false;
  private readonly notes: string[] = [];
  /** Sentences already handed to a stream channel in this turn. */
  private streamed: string[] = [];
  /** Output mode decided when the turn starts. */
  private mode: 'auto' | 'explicit' = 'auto';
  private readonly projection = new ProjectionTracker();

  constructor(
    readonly input: InputMessage,
    private readonly k: KernelServices,
  ) {
    this.result = { input_id: input.id, reply: '', status: 'done', tools: [] };
  }

  /** Ask the turn to yield at the next LLM boundary (aborts an in-flight LLM call). */
  requestPreempt(note?: string): void {
    this.preemptRequested = true;
    if (note) this.notes.push(note);
    if (this.controller) {
      this.abortReason = 'preempt';
      this.controller.abort(new Error('preempted'));
    }
  }

  /** Stop: abort the in-flight LLM call; the turn ends as interrupted. */
  stop(): void {
    this.stopped = true;
    this.stopSignal.abort(new Error('stopped'));
    this.abortReason = 'stop';
    this.controller?.abort(new Error('stopped'));
    for (const f of this.toolAborts) f();
  }

  /** Add an "[interrupt] ..." note delivered before the next LLM call. */
  addNote(text: string): void {
    this.notes.push(text);
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Run (or resume) the turn. Never rejects. */
  async run(): Promise<RunOutcome> {
    try {
      if (!this.frame.started && this.cancelledByStop) {
        // Queued when stop was pressed: it never runs a stage, so nothing of it can act.
        this.frame.started = true;
        this.finishCancelled();
      } else if (!this.frame.started) {
        this.frame.started = true;
        await this.begin();
      }
      if (this.result.status !== 'cancelled') {
        const text = await this.toolLoop();
        if (text === null) return { kind: 'preempted' };
        await this.finishWithText(text);
      }
    } catch (err) {
      if (err instanceof ShortCircuit) {
        await this.finishShortCircuit(err.response).catch((e: unknown) => this.k.log.error({ err: errorMessage(e) }, 'short-circuit delivery failed'));
      } else if (err instanceof InterruptedUnwind) {
        await this.finishInterrupted().catch((e: unknown) => this.k.log.error({ err: errorMessage(e) }, 'interrupted turn cleanup failed'));
      } else if (err instanceof AlreadyFinished) {
        /* delivered and after_output ran */
      } else {
        this.k.log.error({ input: this.input.id, err: errorMessage(err), stack: err instanceof Error ? err.stack : undefined }, 'turn failed');
        this.result.status = 'error';
        this.result.error = errorMessage(err);
        await this.afterOutput('').catch(() => undefined);
      }
    }
    this.preemptRequested = false;
    this.log({ type: 'turn.finished', turn: this.input.id, status: this.result.status, reply: this.result.reply });
    return { kind: 'finished', result: this.result };
  }

  /** Append to the run log; a failing log never breaks the turn. */
  private log(ev: RunEvent): void {
    try {
      this.k.runLog.append(ev);
    } catch (err) {
      this.k.log.warn({ err: errorMessage(err) }, 'run log append failed');
    }
  }

  // ---- phases -------------------------------------------------------------

  private async begin(): Promise<void> {
    const k = this.k;
    this.mode = k.settings.get<string>('core.output.mode') === 'explicit' ? 'explicit' : 'auto';
    k.bus.publish('raw_input', this.input);
    this.log({ type: 'turn.started', turn: this.input.id, input: this.input });
    // on_input
    const c1 = await this.stage('on_input', {});
    const text = c1.raw_message;
    this.recordUser(text);
    if (this.stopped) await this.interrupted();
    if (c1.response !== undefined) throw new ShortCircuit(c1.response, 'on_input');
    // context append/prune + recall
    const provider = k.provider();
    const window = await this.contextWindow(provider);
    const tools = this.toolSchemas();
    const persona = k.persona();
    const rules = outputRules(this.mode, this.input.channel, k.outputs.names());
    const fixed = estimateTokens(persona) + estimateTokens(rules) + estimateTokens(JSON.stringify(tools)) + 200;
    const budget = computeTokenBudget(window, fixed);
    try {
      k.memory.prune(text);
    } catch (err) {
      k.log.warn({ err: errorMessage(err) }, 'context prune failed');
    }
    let memoryBlock = '';
    if (this.input.channel !== '_consolidation_') {
      try {
        const recalled = await k.memory.recallForPrompt(text, budget.memory, this.frame.recalledIds);
        memoryBlock = recalled.text;
        this.frame.memory = recalled.items;
      } catch (err) {
        k.log.warn({ err: errorMessage(err) }, 'memory recall failed');
      }
    }
    const system: ChatMessage = {
      role: 'system',
      content: [persona.trim(), `Current time: ${new Date(k.clock.now()).toString()}.`, rules, memoryBlock].filter(Boolean).join('\n\n'),
    };
    // The timeline excludes the event just appended (it is the user message below).
    const timeline = timelineMessages(k.memory.timeline(budget.context).filter((e) => e.id !== `${this.input.id}:user`));
    const messages: ChatMessage[] = [system, ...timeline, { role: 'user', content: text, ...(this.input.images ? { images: this.input.images } : {}) }];
    // pre_action
    const c2 = await this.stage('pre_action', { context_messages: messages, memory: this.frame.memory });
    if (this.stopped) await this.interrupted();
    if (c2.response !== undefined) throw new ShortCircuit(c2.response, 'pre_action');
    this.frame.messages = c2.context_messages;
    k.log.debug({ input: this.input.id, tokens: messagesTokens(this.frame.messages), budget }, 'prompt assembled');
  }

  /** The tool loop. Returns the final text, or null when preempted. */
  private async toolLoop(): Promise<string | null> {
    const k = this.k;
    const maxRounds = k.settings.get<number>('core.agent.max_tool_rounds');
    while (this.frame.round < maxRounds) {
      if (this.stopped) return this.interrupted();
      if (this.preemptRequested) {
        this.preemptRequested = false;
        return null;
      }
      for (const n of this.notes.splice(0)) this.frame.messages.push({ role: 'system', content: `[interrupt] ${n}` });
      const provider = k.provider();
      if (!provider) return this.llmUnavailable(new Error('no LLM source is configured'));
      let resp: CompletionResponse;
      const started = performance.now();
      try {
        resp = await this.callModel(provider);
      } catch (err) {
        if (this.abortReason === 'preempt' && !this.stopped) {
          this.abortReason = undefined;
          this.preemptRequested = false;
          return null;
        }
        if (this.stopped) return this.interrupted();
        return this.llmUnavailable(err);
      } finally {
        this.controller = undefined;
      }
      this.frame.round++;
      this.log({ type: 'llm.completed', turn: this.input.id, round: this.frame.round, response: resp });
      k.bus.publish('agent_llm_chain', { input_id: this.input.id, round: this.frame.round, response: resp, duration_ms: performance.now() - started });
      if (resp.reasoning_content) k.bus.publish('reasoning', { input_id: this.input.id, text: resp.reasoning_content });
      // post_action
      const c = await this.stage('post_action', { llm_text: resp.content, tool_calls: resp.tool_calls, context_messages: this.frame.messages });
      if (c.response !== undefined) throw new ShortCircuit(c.response, 'post_action');
      this.frame.messages = c.context_messages;
      const text = c.llm_text;
      const calls = c.tool_calls;
      this.frame.lastText = text;
      if (calls.length === 0) return text;
      this.frame.messages.push({ role: 'assistant', content: text, tool_calls: calls });
      let denied = 0;
      const images: Array<{ tool: string; images: string[] }> = [];
      for (const call of calls) {
        if (this.stopped) return this.interrupted();
        const r = await this.runTool(call);
        if (r === 'denied') denied++;
        else if (typeof r === 'object') images.push(r);
      }
      // Images returned by tools reach a multimodal model in a user message after the tool results.
      for (const im of images) this.frame.messages.push({ role: 'user', content: `[image returned by ${im.tool}]`, images: im.images });
      if (denied === calls.length) return text;
    }
    k.log.warn({ input: this.input.id, rounds: this.frame.round }, 'max_tool_rounds reached');
    return this.frame.lastText;
  }

  /** before_toolcall -> validate+execute -> after_toolcall for one call. */
  private async runTool(original: ToolCall): Promise<'ran' | 'denied' | { tool: string; images: string[] }> {
    const k = this.k;
    const c1 = await this.stage('before_toolcall', { tool_call: structuredClone(original) });
    if (c1.response !== undefined) throw new ShortCircuit(c1.response, 'before_toolcall');
    if (this.stopped) await this.interrupted();
    const call = c1.tool_call ?? original;
    const name = call.function.name;
    const args = call.function.arguments ?? {};
    if (c1.deny) {
      const reason = c1.deny_reason ?? 'denied by policy';
      this.frame.messages.push({ role: 'tool', tool_call_id: call.id, name, content: `denied: ${reason}` });
      this.result.tools.push({ name, arguments: args, result: `denied: ${reason}`, is_error: true, denied: true });
      k.bus.publish('tool_call', { input_id: this.input.id, call_id: call.id, name, arguments: args, result: `denied: ${reason}`, is_error: true, denied: true, duration_ms: 0 });
      this.log({ type: 'tool.executed', turn: this.input.id, call_id: call.id, name, arguments: args, result: `denied: ${reason}`, is_error: true, denied: true });
      return 'denied';
    }
    const controller = new AbortController();
    const onStop = () => controller.abort(new Error('stopped'));
    this.toolAborts.add(onStop);
    const exec = await k.tools.execute(name, args, { input: this.input, signal: controller.signal, call_id: call.id });
    this.toolAborts.delete(onStop);
    const c2 = await this.stage('after_toolcall', { tool_call: call, tool_result: { call_id: call.id, name, content: exec.content, is_error: exec.is_error } });
    if (c2.response !== undefined) throw new ShortCircuit(c2.response, 'after_toolcall');
    const result = c2.tool_result ?? { call_id: call.id, name, content: exec.content, is_error: exec.is_error };
    this.frame.messages.push({ role: 'tool', tool_call_id: call.id, name, content: result.content });
    this.result.tools.push({ name, arguments: args, result: result.content, is_error: result.is_error });
    k.bus.publish('tool_call', { input_id: this.input.id, call_id: call.id, name, arguments: args, result: result.content, is_error: result.is_error, duration_ms: exec.duration_ms });
    this.log({ type: 'tool.executed', turn: this.input.id, call_id: call.id, name, arguments: args, result: result.content, is_error: result.is_error });
    k.memory.append({
      id: `${this.input.id}:tool:${call.id}`,
      time: k.clock.now(),
      kind: 'tool',
      source: this.input.source,
      input: `${name}(${JSON.stringify(args)})`,
      response: result.content,
      tool: name,
    });
    return exec.images?.length && !result.is_error ? { tool: name, images: exec.images } : 'ran';
  }
  private readonly toolAborts = new Set<() => void>();

  /** Stream the model; in auto mode, sentences go to a stream channel as they complete. */
  private async callModel(provider: Provider): Promise<CompletionResponse> {
    const k = this.k;
    this.controller = new AbortController();
    this.abortReason = undefined;
    const signal = this.controller.signal;
    const streamTo = this.mode === 'auto' && this.input.channel !== '_consolidation_' && k.outputs.isStream(this.input.channel) ? this.input.channel : undefined;
    const req = { messages: this.frame.messages, tools: this.toolSchemas(), stream: true };
    for (const ev of this.projection.before(this.input.id, this.frame.round + 1, this.frame.messages)) this.log(ev);
    if (!streamTo) {
      let final: CompletionResponse | undefined;
      for await (const ev of provider.chatStream(req, signal)) if (ev.type === 'done') final = ev.response;
      if (!final) throw new Error('stream ended without a final response');
      return final;
    }
    const splitter = new SentenceSplitter({ firstClause: k.settings.get<boolean>('core.output.first_clause') !== false });
    let held = '';
    let holding: boolean | undefined; // undecided until the first non-space character
    let final: CompletionResponse | undefined;
    for await (const ev of provider.chatStream(req, signal)) {
      if (ev.type === 'content') {
        if (holding === undefined) {
          held += ev.text;
          const t = held.trimStart();
          if (!t) continue;
          holding = t.startsWith('{') || t.startsWith('```') || t.startsWith('[');
          if (!holding) {
            const text = held;
            held = '';
            for (const s of splitter.push(text)) await this.deliverSentence(streamTo, s);
          }
        } else if (holding) {
          held += ev.text;
        } else {
          for (const s of splitter.push(ev.text)) await this.deliverSentence(streamTo, s);
        }
      } else if (ev.type === 'done') {
        final = ev.response;
      }
    }
    if (!final) throw new Error('stream ended without a final response');
    if (final.tool_calls.length === 0) {
      // Held text that was not a tool call is spoken now; the splitter's rest too.
      if (holding && held) for (const s of splitter.push(held)) await this.deliverSentence(streamTo, s);
    }
    const rest = splitter.flush();
    if (rest) await this.deliverSentence(streamTo, rest);
    return final;
  }

  /** One sentence of a streamed reply: before_output (partial) -> channel. */
  private async deliverSentence(channel: string, sentence: string): Promise<void> {
    if (this.stopped) return;
    const c = await this.stage('before_output', { final_text: sentence, partial: true });
    if (c.skip_output || !c.final_text) return;
    this.streamed.push(c.final_text);
    try {
      await this.k.outputs.send({ channel, kind: 'sentence', content: c.final_text, type: 'text', meta: {}, input_id: this.input.id });
    } catch (err) {
      this.k.log.warn({ channel, err: errorMessage(err) }, 'sentence delivery failed');
    }
    this.k.bus.publish('agent_output', { input_id: this.input.id, channel, content: c.final_text, kind: 'sentence' });
    this.log({ type: 'output', turn: this.input.id, channel, kind: 'sentence', content: c.final_text });
  }

  private async finishWithText(text: string): Promise<void> {
    const k = this.k;
    const channel = this.input.channel;
    if (this.mode === 'explicit' || channel === '_consolidation_') {
      if (text) k.bus.publish('reasoning', { input_id: this.input.id, text });
      this.recordAgent(text);
      await this.afterOutput(text);
      return;
    }
    if (k.outputs.isStream(channel)) {
      const full = this.streamed.join(' ');
      if (this.streamed.length > 0) {
        await this.k.outputs.send({ channel, kind: 'end', content: full, type: 'text', meta: {}, input_id: this.input.id }).catch(() => undefined);
      }
      this.result.reply = full;
      this.recordAgent(full);
      await this.afterOutput(full);
      return;
    }
    const c = await this.stage('before_output', { final_text: text });
    if (c.response !== undefined) throw new ShortCircuit(c.response, 'before_output');
    let delivered = '';
    if (!c.skip_output && c.final_text) {
      delivered = c.final_text;
      await this.send(channel, delivered);
    }
    this.result.reply = delivered;
    this.recordAgent(delivered);
    await this.afterOutput(delivered);
  }

  /** A turn cancelled by stop before it ran: its words are remembered, no stage runs. */
  private finishCancelled(): void {
    this.k.bus.publish('raw_input', this.input);
    this.log({ type: 'turn.started', turn: this.input.id, input: this.input });
    this.recordUser(this.input.text);
    this.result.status = 'cancelled';
    this.recordAgent('', true);
  }

  private async finishShortCircuit(response: string): Promise<void> {
    this.result.status = 'short_circuit';
    if (response && this.input.channel !== '_consolidation_') await this.send(this.input.channel, response);
    this.result.reply = response;
    this.recordAgent(response);
    await this.afterOutput(response);
  }

  private async interrupted(): Promise<string> {
    // Unwind: the caller (run) will call finishWithText; mark status so it records "interrupted".
    this.result.status = 'interrupted';
    throw new InterruptedUnwind();
  }

  private async llmUnavailable(err: unknown): Promise<string> {
    const k = this.k;
    k.log.error({ input: this.input.id, err: errorMessage(err) }, 'LLM call failed');
    this.result.status = 'error';
    this.result.error = errorMessage(err);
    const msg = k.settings.get<string>('core.agent.llm_unavailable_message');
    if (this.input.channel !== '_consolidation_') await this.send(this.input.channel, msg).catch(() => undefined);
    this.result.reply = msg;
    this.recordAgent(msg);
    await this.afterOutput(msg);
    throw new AlreadyFinished();
  }

  /** Send a whole message to a channel and publish it. */
  private async send(channel: string, content: string): Promise<void> {
    try {
      await this.k.outputs.send({ channel, kind: 'full', content, type: 'text', meta: {}, input_id: this.input.id });
    } catch (err) {
      this.k.log.warn({ channel, err: errorMessage(err) }, 'reply delivery failed');
    }
    this.k.bus.publish('agent_output', { input_id: this.input.id, channel, content, kind: 'full' });
    this.log({ type: 'output', turn: this.input.id, channel, kind: 'full', content });
  }

  private async afterOutput(text: string): Promise<void> {
    await this.stage('after_output', { final_text: text });
  }

  // ---- helpers ------------------------------------------------------------

  private async stage(stage: StageName, init: StageInit): Promise<StageContext> {
    const ctx = newStageContext(stage, this.input, { memory: this.frame.memory, signal: this.stopSignal.signal, ...init });
    await this.k.stages.run(ctx);
    return ctx;
  }

  private recordUser(text: string): void {
    this.k.memory.append({ id: `${this.input.id}:user`, time: this.input.received_at, kind: 'user', source: this.input.source, input: text, response: '', speaker: this.input.user });
  }

  private recordAgent(text: string, interrupted = false): void {
    if (!text && !interrupted && this.result.status !== 'interrupted') return;
    this.k.memory.append({
      id: `${this.input.id}:agent`,
      time: this.k.clock.now(),
      kind: 'agent',
      source: this.input.source,
      input: '',
      response: text,
      interrupted: interrupted || this.result.status === 'interrupted',
    });
  }

  private toolSchemas() {
    const consolidation = this.input.channel === '_consolidation_';
    return this.k.tools.schemas((def) => !(consolidation && def.name.startsWith('output_send__')));
  }

  private async contextWindow(provider: Provider | undefined): Promise<number> {
    const declared = this.k.settings.get<number>('core.agent.context_window');
    if (declared > 0) return declared;
    try {
      const n = provider?.maxContextTokens ? await provider.maxContextTokens() : undefined;
      if (n && n > 0) return n;
    } catch {
      /* fall back */
    }
    return 8192;
  }

  /** Called by run() for the stop unwind: record what was said before the stop. */
  async finishInterrupted(): Promise<void> {
    const full = this.streamed.join(' ');
    this.result.status = 'interrupted';
    this.result.reply = full;
    if (this.k.outputs.isStream(this.input.channel) && this.streamed.length > 0) {
      await this.k.outputs.send({ channel: this.input.channel, kind: 'end', content: full, type: 'text', meta: {}, input_id: this.input.id, interrupted: true }).catch(() => undefined);
    }
    this.k.bus.publish('agent_output', { input_id: this.input.id, channel: this.input.channel, content: full, kind: 'end', interrupted: true });
    this.recordAgent(full, true);
    await this.afterOutput(full);
  }
}

/** Unwinds the turn after a stop. */
export class InterruptedUnwind {}
/** Unwinds the turn after it already delivered and ran after_output. */
export class AlreadyFinished {}
