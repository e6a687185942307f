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
 * (seed 001 three delivery paths). A stop ends it as interrupted, never
 * retried; a turn cancelled by stop before it ran runs no stage at all.
 *
 * A reply can also end early without a stop (issue 14): the stream breaks
 * after text arrived, or the model passes a limit of what one round may
 * bring (core.agent.max_reply_chars, max_tool_calls; the stream is closed
 * there, turn-limits.ts). The text that arrived is kept (reply, run log,
 * memory) and the turn ends `cut_short` with its reason and one short ending
 * in the input's language (turn-endings.ts). Tool results are cut at
 * core.agent.max_tool_result_bytes.
 *
 * What reaches the channels, and how each outcome is delivered, is the
 * turn's output side (src/kernel/turn-output.ts).
 *
 * The turn records nothing itself: it emits each fact once on the kernel's
 * turn stream (src/kernel/turn-events.ts), whose subscribers keep the run
 * log, the memory window, the bus and the `ask` result. Every phase returns
 * where the turn goes next as a value (`Exit`); `run()` returns the outcome.
 */
import type { ChatMessage, CompletionResponse, Provider, ToolCall } from './llm-types.js';
import type { MemItem } from './memory-types.js';
import type { ContextEvent } from './memory-port.js';
import type { StageContext, StageName } from './stage-types.js';
import { isSelfInput, type CutReason, type InputMessage } from './turn-types.js';
import { UNKNOWN_SPEAKER } from './people.js';
import type { KernelServices } from './services.js';
import { statusOf, type TurnEvent, type TurnOutcome } from './turn-events.js';
import { newStageContext, type StageInit } from './stages.js';
import { SentenceSplitter } from './sentences.js';
import { computeTokenBudget, maskPrivate, messagesTokens, outputRules, promptHistoryOf, promptLayout, requestTokens, stableRules, timelineMessages, contextText, turnContextParts, TURN_RECALL_TOKENS, type PromptHistory } from './prompt.js';
import { summaryMessage } from './compaction.js';
import { errorMessage } from './errors.js';
import { estimateTokens } from './memory-port.js';
import { ProjectionTracker } from './run-log.js';
import { ReplyBudget, capToolResult } from './turn-limits.js';
import { TurnOutput, type HoldState } from './turn-output.js';
import { offeredSchemas, TOOLS_CALL, TOOLS_LOAD, unwrapToolsCall } from './tool-groups.js';
import type { ToolExecution } from './tool-registry.js';

/** Why the in-flight work was aborted. */
export type AbortReason = 'stop' | 'preempt';

/** Where a phase sends the turn instead of going on. */
type Exit =
  | { exit: 'short_circuit'; response: string; stage: StageName; meta?: Record<string, unknown> }
  | { exit: 'stopped' }
  | { exit: 'preempted' }
  | { exit: 'llm_failed'; err: unknown }
  /** The reply ended early; `rest` is the model's text that arrived and reached no channel yet. */
  | { exit: 'cut_short'; reason: CutReason; rest: string; message: string };

/**
 * What one LLM call gave: the whole response; or a failure (`err`) with the
 * text that arrived before it; or a stream the turn closed at a limit
 * (`cut`). `rest` is the arrived text no channel got yet (on a stream
 * channel: the unfinished sentence; elsewhere: all of it).
 */
type ModelAnswer =
  | { response: CompletionResponse }
  | { err: unknown; arrived: boolean; rest: string }
  | { cut: 'reply_limit' | 'tool_call_limit'; rest: string; message: string };

const STOPPED: Exit = { exit: 'stopped' };
const PREEMPTED: Exit = { exit: 'preempted' };

function isExit(v: unknown): v is Exit {
  return typeof v === 'object' && v !== null && 'exit' in v;
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

/** One input's processing. */
export class Turn {
  private readonly frame: Frame = { started: false, messages: [], round: 0, lastText: '', memory: [], recalledIds: new Set() };
  private controller?: AbortController;
  private abortReason?: AbortReason;
  private preemptRequested = false;
  private stopped = false;
  /** Aborted by stop(); stage handlers see it as `ctx.signal`. */
  private readonly stopSignal = new AbortController();
  /** Set by the agent when a stop snapshot included this input (seed 001 cancelBudget). */
  cancelledByStop = false;
  /** Set when the caller went away before the turn began (InjectOptions.signal): it runs no stage. */
  cancelledByCaller = false;
  private readonly notes: string[] = [];
  private readonly projection = new ProjectionTracker();
  private readonly toolAborts = new Set<() => void>();
  /** What reaches the channels, and the agent's words (turn-output.ts). */
  private readonly out: TurnOutput;

  constructor(
    readonly input: InputMessage,
    private readonly k: KernelServices,
  ) {
    this.out = new TurnOutput(input, k, {
      stage: (stage, init) => this.stage(stage, init),
      emit: (ev) => this.emit(ev),
      stopped: () => this.stopped,
    });
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

  /** Stop: abort the in-flight LLM call, running tools and the stage signal; the turn ends as interrupted. */
  stop(): void {
    this.stopped = true;
    // The LLM call first: its socket closing is what stops the model's work
    // (issue 17's stop.llm_abort); the stage signal's listeners (speaker,
    // channels, plugins' forwarded aborts) come after it.
    this.abortReason = 'stop';
    this.controller?.abort(new Error('stopped'));
    this.stopSignal.abort(new Error('stopped'));
    for (const f of this.toolAborts) f();
  }

  /** Add an "[interrupt] ..." note delivered before the next LLM call. */
  addNote(text: string): void {
    this.notes.push(text);
  }

  /** Whether the turn has begun (its first stage was entered); a turn that has not can still be dropped. */
  get begun(): boolean {
    return this.frame.started;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Run (or resume) the turn. Never rejects. Resolves `preempted` when it
   * yielded to a higher interrupt (call run() again to resume); any other
   * outcome is final and was emitted as `turn.finished`.
   */
  async run(): Promise<TurnOutcome> {
    let outcome: TurnOutcome;
    try {
      outcome = await this.advance();
    } catch (err) {
      // A bug, not a control path: every expected way out is an Exit value.
      this.k.log.error({ input: this.input.id, err: errorMessage(err), stack: err instanceof Error ? err.stack : undefined }, 'turn failed');
      this.emit({ type: 'error', turn: this.input.id, where: 'turn', message: errorMessage(err) });
      this.out.said = '';
      await this.out.afterOutput('').catch(() => undefined);
      outcome = { kind: 'error', reply: '', message: errorMessage(err) };
    }
    this.preemptRequested = false;
    if (outcome.kind !== 'preempted') this.emit({ type: 'turn.finished', turn: this.input.id, outcome, status: statusOf(outcome), reply: outcome.reply, said: this.out.said });
    return outcome;
  }

  private async advance(): Promise<TurnOutcome> {
    if (!this.frame.started) {
      this.frame.started = true;
      this.emit({ type: 'turn.started', turn: this.input.id, input: this.input });
      if (this.cancelledByStop || this.cancelledByCaller || this.stopped) {
        // Queued (or picked but not yet begun) when stop was pressed: it never runs a stage, so nothing of it can act.
        this.emit({ type: 'turn.interrupted', turn: this.input.id, cancelled: true });
        return { kind: 'interrupted', reply: '', cancelled: true };
      }
      const exit = await this.begin();
      if (exit) return this.leave(exit);
    }
    const r = await this.toolLoop();
    if (isExit(r)) return this.leave(r);
    return this.out.finishWithText(r.text);
  }

  /** Emit one event on the kernel's turn stream. */
  private emit(ev: TurnEvent): void {
    this.k.turnEvents.emit(ev);
  }

  /** Where an Exit leads. */
  private async leave(exit: Exit): Promise<TurnOutcome> {
    switch (exit.exit) {
      case 'preempted':
        return { kind: 'preempted' };
      case 'stopped':
        return this.out.finishInterrupted();
      case 'short_circuit':
        return this.out.finishShortCircuit(exit.response, exit.stage, exit.meta);
      case 'llm_failed':
        return this.out.llmUnavailable(exit.err);
      case 'cut_short':
        return this.out.finishCutShort(exit.reason, exit.rest, exit.message);
    }
  }

  // ---- phases -------------------------------------------------------------

  /** on_input, context assembly and pre_action; an Exit when the turn goes no further. */
  private async begin(): Promise<Exit | undefined> {
    const k = this.k;
    this.out.mode = k.settings.get<string>('core.output.mode') === 'explicit' ? 'explicit' : 'auto';
    // on_input
    const c1 = await this.stage('on_input', {});
    const text = c1.raw_message;
    if (this.stopped) return STOPPED;
    if (c1.response !== undefined) return { exit: 'short_circuit', response: c1.response, stage: 'on_input', ...(c1.response_meta ? { meta: c1.response_meta } : {}) };
    // context append/prune + recall
    const provider = k.provider();
    const window = await this.contextWindow(provider);
    const tools = this.toolSchemas();
    const persona = k.persona();
    const legacy = promptLayout() === 'legacy';
    // Sections such as the skill list (issue 17) sit after the rules and count toward the fixed budget.
    const rules = [legacy ? outputRules(this.out.mode, this.input.channel, k.outputs.names()) : stableRules(this.out.mode, k.outputs.names()), k.promptSections.text()].filter(Boolean).join('\n\n');
    const fixed = estimateTokens(persona) + estimateTokens(rules) + estimateTokens(JSON.stringify(tools)) + 200;
    const budget = computeTokenBudget(window, fixed);
    // The kernel's own inputs (consolidation) neither prune nor recall: housekeeping is not what the household talks about.
    const self = isSelfInput(this.input);
    if (!self) {
      try {
        // The memory's own business (archiving to documents); the prompt's history below is not re-pruned by it.
        k.memory.prune(text);
      } catch (err) {
        k.log.warn({ err: errorMessage(err) }, 'context prune failed');
      }
    }
    // An ordinary turn recalls a few items (they are new tokens every turn); memory_recall brings more. `shown`: the
    // history the prompt shows, whose lines the recall block does not repeat (issue 19).
    const recall = async (shown?: string, covered?: ReadonlySet<string>): Promise<string> => {
      if (self) return '';
      try {
        const recalled = await k.memory.recallForPrompt(text, legacy ? budget.memory : Math.min(budget.memory, TURN_RECALL_TOKENS), this.frame.recalledIds, this.input.user, shown, covered);
        this.frame.memory = recalled.items;
        return recalled.text;
      } catch (err) {
        k.log.warn({ err: errorMessage(err) }, 'memory recall failed');
        return '';
      }
    };
    const user: ChatMessage = { role: 'user', content: text, ...(this.input.images ? { images: this.input.images } : {}) };
    // Another person's sensitive words in the history are shown as placeholders (the kernel's own turns see nobody's).
    const viewer = self ? null : this.input.user;
    // The timeline excludes this turn's own user event (it is the user message below).
    const own = (e: ContextEvent): boolean => e.id !== `${this.input.id}:user`;
    let messages: ChatMessage[];
    if (legacy) {
      const memoryBlock = await recall();
      const system: ChatMessage = {
        role: 'system',
        content: [persona.trim(), `Current time: ${new Date(k.clock.now()).toString()}.`, rules, memoryBlock].filter(Boolean).join('\n\n'),
      };
      messages = [system, ...timelineMessages(maskPrivate(k.memory.timeline(budget.context).filter(own), viewer), { toolNotes: true }), user];
    } else {
      // Most stable first: persona and rules, (tools,) the history appended turn by turn, then what changes every turn.
      const system: ChatMessage = { role: 'system', content: [persona.trim(), rules].filter(Boolean).join('\n\n') };
      const ph = promptHistoryOf(k.memory, k.runLog, (r) => {
        if (r.orphan) k.log.warn({ compaction: r.orphan }, 'a compaction of the prompt history was cut off (the process stopped in the middle): the summary and history before it stay; its original text is in the run log');
      });
      if (ph.compacting) await ph.compacting;
      ph.update(k.memory.timeline(Number.MAX_SAFE_INTEGER), budget.context);
      const history = (): ChatMessage[] => [...(ph.summary ? [summaryMessage(ph.summary.sections)] : []), ...timelineMessages(maskPrivate(ph.events().filter(own), viewer))];
      const memoryBlock = await recall(history().map((m) => m.content ?? '').join('\n'), ph.covered());
      const parts = turnContextParts({ now: k.clock.now(), channel: this.input.channel, mode: this.out.mode, memory: memoryBlock, ...(self ? {} : { speaker: this.input.user ?? UNKNOWN_SPEAKER }) });
      const context: ChatMessage = { role: 'user', content: contextText(parts) };
      // Later prompts show this turn's message with the same context before it (the prompt grows by appending).
      if (!self) ph.setContext(`${this.input.id}:user`, parts);
      // Most stable first: system, (tools,) the summary at its fixed place, the history appended turn by turn, then this turn's context and message.
      const assemble = (): ChatMessage[] => [system, ...history(), context, user];
      messages = assemble();
      if (await this.compactIfNeeded(ph, { system, context, user, messages, tools, band: budget.band, own })) messages = assemble();
    }
    // pre_action
    const c2 = await this.stage('pre_action', { context_messages: messages, memory: this.frame.memory });
    if (this.stopped) return STOPPED;
    if (c2.response !== undefined) return { exit: 'short_circuit', response: c2.response, stage: 'pre_action' };
    this.frame.messages = c2.context_messages;
    k.log.debug({ input: this.input.id, tokens: messagesTokens(this.frame.messages), budget }, 'prompt assembled');
    return undefined;
  }

  /**
   * Compact the prompt history when the projected prompt (`messages` and
   * `tools`, estimated) would exceed the working band: core.agent.prompt_band
   * within the window's band (`band`; seed 002 §7 trigger). The tail kept is
   * core.agent.compaction_tail_tokens, less when the band leaves less room
   * beside the summary. True when the history changed. A failed compaction
   * is logged, never an error of the turn.
   */
  private async compactIfNeeded(
    ph: PromptHistory,
    p: { system: ChatMessage; context: ChatMessage; user: ChatMessage; messages: ChatMessage[]; tools: ReturnType<Turn['toolSchemas']>; band: number; own: (e: ContextEvent) => boolean },
  ): Promise<boolean> {
    const k = this.k;
    const provider = k.provider();
    if (!provider || this.input.channel === '_consolidation_') return false;
    const setting = k.settings.get<number>('core.agent.prompt_band');
    const band = setting > 0 ? Math.min(setting, p.band) : p.band;
    const toolTokens = estimateTokens(JSON.stringify(p.tools));
    const projected = requestTokens(p.messages) + toolTokens;
    if (projected <= band) return false;
    const summaryTokens = k.settings.get<number>('core.agent.compaction_summary_tokens');
    const room = band - toolTokens - requestTokens([p.system, p.context, p.user]) - summaryTokens;
    const tailTokens = Math.max(0, Math.min(k.settings.get<number>('core.agent.compaction_tail_tokens'), room));
    try {
      const r = await ph.compact({ runLog: k.runLog, turn: this.input.id, now: k.clock.now(), provider, system: p.system, tools: p.tools, tailTokens, summaryTokens, keep: p.own, signal: this.stopSignal.signal });
      if (r.status === 'none') return false;
      const level = r.status === 'summarised' ? 'info' : 'warn';
      k.log[level]({ input: this.input.id, compaction: r.id, projected, band, tail: tailTokens, ...('covered' in r ? { covered: r.covered } : {}), ...(r.reason ? { reason: r.reason } : {}) }, `prompt history compaction ${r.status}`);
      return r.status !== 'abandoned';
    } catch (err) {
      k.log.error({ err: errorMessage(err) }, 'prompt history compaction failed');
      return false;
    }
  }

  /** The tool loop: the final text, or where the turn goes instead. */
  private async toolLoop(): Promise<{ text: string } | Exit> {
    const k = this.k;
    const maxRounds = k.settings.get<number>('core.agent.max_tool_rounds');
    while (this.frame.round < maxRounds) {
      if (this.stopped) return STOPPED;
      if (this.preemptRequested) {
        this.preemptRequested = false;
        return PREEMPTED;
      }
      for (const n of this.notes.splice(0)) this.frame.messages.push({ role: 'system', content: `[interrupt] ${n}` });
      const provider = k.provider();
      if (!provider) return { exit: 'llm_failed', err: new Error('no LLM source is configured') };
      const started = performance.now();
      const answer = await this.callModel(provider);
      this.controller = undefined;
      if ('cut' in answer) return { exit: 'cut_short', reason: answer.cut, rest: answer.rest, message: answer.message };
      if ('err' in answer) {
        if (this.abortReason === 'preempt' && !this.stopped) {
          this.abortReason = undefined;
          this.preemptRequested = false;
          return PREEMPTED;
        }
        if (this.stopped) return STOPPED;
        // Text arrived before the stream broke: keep it and say why it ends here.
        if (answer.arrived) {
          k.log.warn({ input: this.input.id, err: errorMessage(answer.err) }, 'the LLM stream broke mid-answer; keeping the text that arrived');
          this.emit({ type: 'error', turn: this.input.id, where: 'llm', message: errorMessage(answer.err) });
          return { exit: 'cut_short', reason: 'connection_lost', rest: answer.rest, message: errorMessage(answer.err) };
        }
        return { exit: 'llm_failed', err: answer.err };
      }
      const resp = answer.response;
      const maxCalls = k.settings.get<number>('core.agent.max_tool_calls');
      if (resp.tool_calls.length > maxCalls) {
        // Calls written as text (or a whole non-streamed body) are counted here, once the answer is complete.
        return { exit: 'cut_short', reason: 'tool_call_limit', rest: this.out.streamChannel() ? '' : resp.content, message: `${resp.tool_calls.length} tool calls in one round (limit ${maxCalls})` };
      }
      this.frame.round++;
      this.emit({ type: 'llm.completed', turn: this.input.id, round: this.frame.round, response: resp, duration_ms: performance.now() - started });
      // post_action
      const c = await this.stage('post_action', { llm_text: resp.content, tool_calls: resp.tool_calls, context_messages: this.frame.messages });
      if (c.response !== undefined) return { exit: 'short_circuit', response: c.response, stage: 'post_action' };
      this.frame.messages = c.context_messages;
      const text = c.llm_text;
      const calls = c.tool_calls;
      this.frame.lastText = text;
      if (calls.length === 0) return { text };
      this.frame.messages.push({ role: 'assistant', content: text, tool_calls: calls });
      let denied = 0;
      const images: Array<{ tool: string; images: string[] }> = [];
      for (const call of calls) {
        if (this.stopped) return STOPPED;
        const r = await this.runTool(call);
        if (isExit(r)) return r;
        if (r === 'denied') denied++;
        else if (typeof r === 'object') images.push(r);
      }
      // Images returned by tools reach a multimodal model in a user message after the tool results.
      for (const im of images) this.frame.messages.push({ role: 'user', content: `[image returned by ${im.tool}]`, images: im.images });
      if (denied === calls.length) return { text };
    }
    k.log.warn({ input: this.input.id, rounds: this.frame.round }, 'max_tool_rounds reached');
    return { text: this.frame.lastText };
  }

  /**
   * before_toolcall -> validate+execute -> after_toolcall for one call. A
   * tools_call (src/kernel/tool-groups.ts) is unwrapped first: the stages,
   * the registry's validation and the events see the inner call, like a
   * direct one (`via` says how it came); the result goes back to the model as
   * the answer to its tools_call.
   */
  private async runTool(received: ToolCall): Promise<'ran' | 'denied' | { tool: string; images: string[] } | Exit> {
    const k = this.k;
    const replyAs = { id: received.id, name: received.function.name };
    const unwrapped = unwrapToolsCall(received);
    if (unwrapped && 'error' in unwrapped) {
      const result = `error: ${unwrapped.error}`;
      this.frame.messages.push({ role: 'tool', tool_call_id: replyAs.id, name: replyAs.name, content: result });
      this.emit({ type: 'tool.executed', turn: this.input.id, call_id: received.id, name: replyAs.name, arguments: received.function.arguments ?? {}, result, is_error: true, duration_ms: 0 });
      return 'ran';
    }
    const original = unwrapped ? unwrapped.call : received;
    const via = unwrapped ? { via: replyAs.name } : {};
    const c1 = await this.stage('before_toolcall', { tool_call: structuredClone(original) });
    // Stopped while a stage decided (e.g. a confirmation question): the call never runs.
    if (this.stopped) return STOPPED;
    if (c1.response !== undefined) return { exit: 'short_circuit', response: c1.response, stage: 'before_toolcall' };
    const call = c1.tool_call ?? original;
    const name = call.function.name;
    const args = call.function.arguments ?? {};
    if (c1.deny) {
      const result = `denied: ${c1.deny_reason ?? 'denied by policy'}`;
      this.frame.messages.push({ role: 'tool', tool_call_id: replyAs.id, name: replyAs.name, content: result });
      this.emit({ type: 'tool.executed', turn: this.input.id, call_id: call.id, name, arguments: args, result, is_error: true, denied: true, duration_ms: 0, ...via });
      return 'denied';
    }
    this.emit({ type: 'tool.pre_execute', turn: this.input.id, call_id: call.id, name, arguments: args, ...via });
    const controller = new AbortController();
    const onStop = () => controller.abort(new Error('stopped'));
    this.toolAborts.add(onStop);
    const exec: ToolExecution = this.toolAllowed(name)
      ? await k.tools.execute(name, args, { input: this.input, signal: controller.signal, call_id: call.id })
      : { content: `error: ${name} cannot be used on the ${this.input.channel} channel`, is_error: true, duration_ms: 0 };
    this.toolAborts.delete(onStop);
    const maxBytes = k.settings.get<number>('core.agent.max_tool_result_bytes');
    const content = this.capToolResult(name, exec.content, maxBytes);
    const c2 = await this.stage('after_toolcall', { tool_call: call, tool_result: { call_id: call.id, name, content, is_error: exec.is_error } });
    if (c2.response !== undefined) return { exit: 'short_circuit', response: c2.response, stage: 'after_toolcall' };
    const result = c2.tool_result ?? { call_id: call.id, name, content, is_error: exec.is_error };
    // A stage may have rewritten the result: the limit holds for what is fed back and recorded.
    if (result.content !== content) result.content = this.capToolResult(name, result.content, maxBytes);
    this.frame.messages.push({ role: 'tool', tool_call_id: replyAs.id, name: replyAs.name, content: result.content });
    this.emit({ type: 'tool.executed', turn: this.input.id, call_id: call.id, name, arguments: args, result: result.content, is_error: result.is_error, duration_ms: exec.duration_ms, ...via });
    return exec.images?.length && !result.is_error ? { tool: name, images: exec.images } : 'ran';
  }

  /**
   * Stream the model (each piece a live `llm.delta`); in auto mode, sentences
   * go to a stream channel as they complete. What the model writes is
   * counted: past core.agent.max_reply_chars characters (answer, reasoning
   * and tool-call arguments) or core.agent.max_tool_calls calls the loop
   * stops reading, which closes the connection, and the answer is `cut`. A
   * failed or aborted call is returned as `{ err }` with the text that had
   * arrived.
   */
  private async callModel(provider: Provider): Promise<ModelAnswer> {
    const k = this.k;
    this.controller = new AbortController();
    this.abortReason = undefined;
    const signal = this.controller.signal;
    const streamTo = this.out.streamChannel();
    const req = { messages: this.frame.messages, tools: this.toolSchemas(), stream: true };
    const round = this.frame.round + 1;
    const promptTokens = messagesTokens(req.messages) + estimateTokens(JSON.stringify(req.tools));
    for (const ev of this.projection.before(this.input.id, round, this.frame.messages)) this.emit(ev.type === 'llm.requested' ? { ...ev, prompt_tokens: promptTokens } : ev);
    const splitter = new SentenceSplitter({ firstClause: k.settings.get<boolean>('core.output.first_clause') !== false });
    const budget = new ReplyBudget(k.settings.get<number>('core.agent.max_reply_chars'), k.settings.get<number>('core.agent.max_tool_calls'));
    const st: HoldState = { held: '', holding: undefined };
    let final: CompletionResponse | undefined;
    /** Content that arrived this round (all of it: what went to a channel and what did not yet). */
    let arrived = '';
    /** The arrived text no channel got: the unfinished sentence on a stream channel, all of it elsewhere; held JSON-like text is not text. */
    const rest = (): string => (streamTo ? (st.holding ? '' : st.held + splitter.flush()) : arrived);
    /** Whether text that is not a held JSON-like answer arrived. */
    const said = (): boolean => arrived.trim() !== '' && !(streamTo && st.holding);
    try {
      for await (const ev of provider.chatStream(req, signal)) {
        if (ev.type === 'done') {
          final = ev.response;
          continue;
        }
        if (ev.type === 'tool_call_delta') {
          if (!budget.toolCall(ev.index, ev.arguments)) break;
          continue;
        }
        const text = budget.text(ev.text);
        if (text) this.emit({ type: 'llm.delta', turn: this.input.id, round, kind: ev.type, text });
        if (ev.type === 'content' && text) {
          arrived += text;
          if (streamTo) await this.out.streamText(streamTo, text, splitter, st);
        }
        if (budget.cut) break;
      }
    } catch (err) {
      return { err, arrived: said(), rest: rest() };
    }
    if (budget.cut) {
      // Leaving the loop closed the stream (and with it the connection).
      k.log.warn({ input: this.input.id, round, limit: budget.cut, chars: budget.used, tool_calls: budget.toolCalls }, `LLM reply cut: ${budget.message}`);
      return { cut: budget.cut, rest: rest(), message: budget.message };
    }
    if (!final) return { err: new Error('stream ended without a final response'), arrived: said(), rest: rest() };
    if (streamTo) {
      // Held text that was not a tool call is spoken now; the splitter's rest too.
      if (final.tool_calls.length === 0 && st.holding && st.held) for (const s of splitter.push(st.held)) await this.out.deliverSentence(streamTo, s);
      const tail = splitter.flush();
      if (tail) await this.out.deliverSentence(streamTo, tail);
    }
    return { response: final };
  }

  // ---- helpers ------------------------------------------------------------

  /** A tool result within core.agent.max_tool_result_bytes (turn-limits.ts capToolResult); a cut one is logged. */
  private capToolResult(tool: string, content: string, maxBytes: number): string {
    const r = capToolResult(typeof content === 'string' ? content : String(content), maxBytes);
    if (r.bytes !== undefined) this.k.log.warn({ input: this.input.id, tool, bytes: r.bytes, limit: maxBytes }, 'tool result cut at core.agent.max_tool_result_bytes');
    return r.text;
  }

  private async stage(stage: StageName, init: StageInit): Promise<StageContext> {
    const ctx = newStageContext(stage, this.input, { memory: this.frame.memory, signal: this.stopSignal.signal, ...init });
    await this.k.stages.run(ctx);
    return ctx;
  }

  /**
   * The tools this turn offers: the core, the tools of the input's channel
   * (in output mode auto not its output_send: the reply goes there anyway)
   * and the loader (tool-groups.ts offeredSchemas); every tool but the
   * loader's two in the legacy layout (the bench's baseline). The internal channel sends to no
   * output channel.
   */
  private toolSchemas() {
    const allow = (def: { name: string }) => this.toolAllowed(def.name);
    if (promptLayout() === 'legacy') return this.k.tools.schemas((def) => allow(def) && def.name !== TOOLS_LOAD && def.name !== TOOLS_CALL);
    return offeredSchemas(this.k.tools, this.k.settings, this.input.channel, allow, this.out.mode);
  }

  /** Whether this turn may run tool `name` at all (directly or through tools_call): not an output tool on the internal channel. */
  private toolAllowed(name: string): boolean {
    return !(this.input.channel === '_consolidation_' && name.startsWith('output_send__'));
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
}
