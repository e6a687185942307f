/**
 * Prompt bench (issue 19 "A stable prefix"): what a local model has to read
 * per turn. The whole service (startApp) against the shared test home
 * (../shared/fixtures/home: a real Mosquitto, the device simulator) and the
 * LLM test server, which records every request; a scripted 30-turn household
 * conversation (device commands, questions, things to remember and recall;
 * the model's answers and tool calls scripted per turn). Each recorded
 * request is rendered the way a chat template reads it (system, tools,
 * messages in order; test/kernel/prompt-render.ts) and counted with a real
 * BPE tokenizer (js-tiktoken, o200k_base, its vocabulary inside the package).
 *
 * Issue 19 "Only the tools a turn needs": the test server refuses any
 * scripted call of a tool its request did not offer (refuseUnofferedTools),
 * and some turns need tools outside the core: they load the group with
 * tools_load and call the tool with tools_call (knowledge_search,
 * memory_purge), once in a later turn without loading again. Every turn must
 * succeed: its status, and every tool it ran is the scripted one and
 * answered without error.
 *
 * Figures, for an ordinary turn's first request (turns a local intent
 * answers never reach the model and are not counted):
 *   prompt.tokens_ordinary_turn        p50 of the prompt's tokens
 *   prompt.tokens_offered              p50 of the prompt's tokens without the conversation history: what every
 *                                      ordinary turn is offered (system, tools, turn context, the new message)
 *   prompt.tokens_tools                the tool schemas' tokens (the block a chat template renders)
 *   prompt.tokens_history              p50 of the conversation history's tokens
 *   prompt.new_tokens_per_turn         p50 of the tokens after the longest prefix shared with the previous request
 *   prompt.new_tokens_per_turn_p90     p90 of the same
 *   prompt.shared_prefix_pct           p50 share of the prompt shared with the previous request, follow-up turns
 *   prompt.shared_prefix_pct_no_compaction  the same, on follow-up turns that did not compact
 *   prompt.shared_prefix_pct_min       the lowest share (a compaction, or the first turn after a local one)
 *   prompt.compactions                 summary requests (src/kernel/compaction.ts) in the run; the scripted
 *                                      model answers them with the facts it was told; they are not turn requests
 * PROMPT_TRACE=1 prints each turn's figures (PROMPT_TRACE=diff also where it parts from the previous request); PROMPT_DUMP=<n> the n-th turn's rendered prompt.
 * PROMPT_BAND, PROMPT_TAIL, PROMPT_SUMMARY, PROMPT_DOCS, PROMPT_DOC_SIM set core.agent.prompt_band,
 * compaction_tail_tokens, compaction_summary_tokens, core.memory.prompt_docs and
 * prompt_doc_min_similarity for the run (to compare choices). The defaults were chosen on SCRIPT;
 * prompt.heldout.* are the stable layout's figures on HELD_OUT, a conversation not used to choose them.
 * each also as `<figure>.legacy`: the layout before issue 19 (time, channel
 * and recall in the system message, the timeline re-pruned every turn),
 * measured in the same run on a fresh service (src/kernel/prompt.ts setPromptLayout).
 * Targets: new tokens per ordinary turn p50 <= 300; shared prefix >= 90 %.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { setPromptLayout, type PromptLayout } from '../../src/kernel/prompt.js';
import { COMPACTION_REQUEST_MARK, SUMMARY_MARK } from '../../src/kernel/compaction.js';
import { DEFAULT_CORE_TOOLS, TOOLS_CALL, TOOLS_LOAD } from '../../src/kernel/tool-groups.js';
import type { ReceivedBody, ReceivedRequest, Reply } from '../support/llm-test-server.js';
import { startE2E } from '../support/e2e-home.js';
import { commonPrefixLength, renderRequest, renderTools, TURN_CONTEXT_MARK } from '../kernel/prompt-render.js';

/** A tool call of the scripted model. */
type Call = { name: string; arguments: Record<string, unknown> };

/** One scripted turn: what is said, the tool the model calls first (if any) or the calls it makes one round each, its answer. */
interface Step {
  say: string;
  tool?: Call;
  calls?: Call[];
  answer: string;
}

const load = (group: string): Call => ({ name: 'tools_load', arguments: { group } });
const via = (name: string, args: Record<string, unknown>): Call => ({ name: 'tools_call', arguments: { name, arguments: args } });

const ctl = (device: string, action: string, extra: Record<string, unknown> = {}): Step['tool'] => ({ name: 'device_control', arguments: { device, action, ...extra } });

/** The 30-turn household conversation. */
const SCRIPT: Step[] = [
  { say: 'Good morning! Could you make the kitchen a bit brighter for breakfast?', tool: ctl('Kitchen Lights', 'turn_on', { brightness: 80 }), answer: 'Kitchen lights are at 80 percent.' },
  { say: 'What is a quick breakfast with eggs and spinach?', answer: 'Try a spinach omelette: whisk two eggs, wilt the spinach, fold it in. Five minutes.' },
  { say: 'Remember that Anna is allergic to peanuts.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'Anna', relation: 'is allergic to', object: 'peanuts', subject_type: 'person' }] } }, answer: "Got it, I'll remember Anna's peanut allergy." },
  { say: 'Is the front door locked?', tool: { name: 'device_state', arguments: { device: 'Front Door' } }, answer: 'Yes, the front door is locked.' },
  { say: 'How warm is it set in the living room?', tool: { name: 'device_state', arguments: { device: 'EcoBee' } }, answer: 'The thermostat is set to 21 degrees.' },
  { say: 'Make it a little warmer, say twenty two degrees.', tool: ctl('EcoBee', 'set_temperature', { temperature: 22 }), answer: 'Set to 22 degrees.' },
  { say: 'What should I pack for a picnic with two kids?', answer: 'Sandwiches, fruit, water, a blanket, wipes and sun cream.' },
  { say: 'Please put on some mood lighting, friends are coming over.', tool: ctl('Mood Lighting', 'activate'), answer: 'Mood lighting is on.' },
  { say: 'Remember that Tom prefers sparkling water.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'Tom', relation: 'prefers', object: 'sparkling water', subject_type: 'person' }] } }, answer: "Noted: Tom likes sparkling water." },
  { say: 'Is the garage door closed?', tool: { name: 'device_state', arguments: { device: 'Garage Door' } }, answer: 'The garage door is closed.' },
  { say: 'How long should I boil pasta?', answer: 'Most dried pasta takes nine to eleven minutes; check the packet.' },
  { say: 'Could you switch the TV off, nobody is watching.', tool: ctl('TV', 'turn_off'), answer: 'The TV is off.' },
  { say: 'What is Anna allergic to again?', answer: 'Anna is allergic to peanuts.' },
  { say: 'Dim the office ceiling light to about a third.', tool: ctl('Office Ceiling', 'turn_on', { brightness: 33 }), answer: 'The office ceiling light is at 33 percent.' },
  { say: 'How humid is it outside?', tool: { name: 'device_state', arguments: { device: 'Outdoor Humidity' } }, answer: 'Outdoor humidity is 54 percent.' },
  { say: 'Any tips to get a toddler to sleep earlier?', answer: 'Keep a calm routine, dim lights an hour before, and the same bedtime every night.' },
  { say: 'Set the bed light to a warm low glow.', tool: ctl('Bed Light', 'turn_on', { brightness: 20, color: 'orange' }), answer: 'The bed light is glowing warm and low.' },
  { say: 'Remember that the plumber comes on Thursday at nine.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'plumber', relation: 'visits on', object: 'Thursday 9:00' }] } }, answer: "I'll remember the plumber on Thursday at nine." },
  { say: 'What does the user guide say about the stop button?', calls: [load('knowledge'), via('knowledge_search', { query: 'stop button' })], answer: 'Press the red button on top and the box stops at once.' },
  { say: 'Which lights are still on in the living room?', tool: { name: 'device_state', arguments: { room: 'Living Room', type: 'light' } }, answer: 'The standing light and the lamp are on.' },
  { say: 'Open the sliding door, it is stuffy.', tool: ctl('Sliding Door', 'open'), answer: 'The sliding door is opening.' },
  { say: 'When is the plumber coming?', answer: 'Thursday at nine.' },
  { say: 'Tom does not drink sparkling water any more, forget that.', calls: [load('admin'), via('memory_purge', { subject: 'Tom', relation: 'prefers', object: 'sparkling water' })], answer: "Forgotten: Tom's sparkling water." },
  { say: 'Close the sliding door again please.', tool: ctl('Sliding Door', 'close'), answer: 'The sliding door is closing.' },
  { say: 'The plumber cancelled, forget about Thursday.', calls: [via('memory_purge', { subject: 'plumber', relation: 'visits on' })], answer: 'Done, the plumber visit is forgotten.' },
  { say: 'What drinks should I get for Tom?', answer: 'I do not know what Tom likes now; maybe ask him.' },
  { say: 'Turn the thermostat down to nineteen for the night.', tool: ctl('EcoBee', 'set_temperature', { temperature: 19 }), answer: 'Set to 19 degrees.' },
  { say: 'Is everything locked up?', tool: { name: 'device_state', arguments: { device: 'Front Door' } }, answer: 'The front door is locked and the garage is closed.' },
  { say: 'Switch off the kitchen lights and the standing light.', tool: ctl('Kitchen Lights', 'turn_off'), answer: 'Kitchen lights are off; the standing light too.' },
  { say: 'Thanks, good night!', answer: 'Good night!' },
];

/**
 * A second conversation, written after the settings were chosen on SCRIPT
 * (core.agent.prompt_band, compaction_tail_tokens,
 * core.memory.prompt_doc_min_similarity) and never used to choose them: its
 * figures are reported as `prompt.heldout.*`. A Saturday: other devices,
 * other people, other facts.
 */
const HELD_OUT: Step[] = [
  { say: 'Morning. Open the sliding door a bit, it is sunny.', tool: ctl('Sliding Door', 'open'), answer: 'The sliding door is opening.' },
  { say: 'How do I make pancakes without milk?', answer: 'Use water or oat drink instead, with one extra egg for richness.' },
  { say: 'Remember that Maya has football practice on Saturdays at ten.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'Maya', relation: 'has football practice on', object: 'Saturdays at ten', subject_type: 'person' }] } }, answer: "Noted, Maya's football is Saturdays at ten." },
  { say: 'Is the garage door open?', tool: { name: 'device_state', arguments: { device: 'Garage Door' } }, answer: 'The garage door is closed.' },
  { say: 'Turn the living room lamp on.', tool: ctl('Standing Light', 'turn_on'), answer: 'The standing light is on.' },
  { say: 'What is a good stretch after running?', answer: 'Try a standing quad stretch and a calf stretch against a wall, thirty seconds each.' },
  { say: 'What temperature is the thermostat at?', tool: { name: 'device_state', arguments: { device: 'EcoBee' } }, answer: 'It is set to 21 degrees.' },
  { say: 'Drop it to twenty, we are going out.', tool: ctl('EcoBee', 'set_temperature', { temperature: 20 }), answer: 'Set to 20 degrees.' },
  { say: 'Remember that grandma visits on Sunday for lunch.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'grandma', relation: 'visits on', object: 'Sunday lunch', subject_type: 'person' }] } }, answer: "I'll remember grandma's Sunday lunch." },
  { say: 'When is Maya playing football?', answer: 'Saturdays at ten.' },
  { say: 'Switch the office light on, full brightness.', tool: ctl('Office Ceiling', 'turn_on', { brightness: 100 }), answer: 'The office light is at full brightness.' },
  { say: 'Give me an idea for a rainy afternoon with kids.', answer: 'Build a blanket fort and read stories inside with torches.' },
  { say: 'Is the front door locked?', tool: { name: 'device_state', arguments: { device: 'Front Door' } }, answer: 'Yes, the front door is locked.' },
  { say: 'What does the manual say about the stop button?', calls: [load('knowledge'), via('knowledge_search', { query: 'stop button' })], answer: 'Press the red button on top and the box stops at once.' },
  { say: 'Close the sliding door now, it got windy.', tool: ctl('Sliding Door', 'close'), answer: 'The sliding door is closing.' },
  { say: 'How long do I roast a chicken?', answer: 'About twenty minutes per half kilo plus twenty, at 190 degrees.' },
  { say: 'Who is coming on Sunday?', answer: 'Grandma is coming for lunch.' },
  { say: 'Set the bed light to half.', tool: ctl('Bed Light', 'turn_on', { brightness: 50 }), answer: 'The bed light is at half.' },
  { say: 'Grandma cannot come this week, forget the Sunday lunch.', calls: [load('admin'), via('memory_purge', { subject: 'grandma', relation: 'visits on' })], answer: 'Done, Sunday lunch is forgotten.' },
  { say: 'Put the TV off please.', tool: ctl('TV', 'turn_off'), answer: 'The TV is off.' },
  { say: 'How humid is it outside now?', tool: { name: 'device_state', arguments: { device: 'Outdoor Humidity' } }, answer: 'Outdoor humidity is 54 percent.' },
  { say: 'Turn off the office light.', tool: ctl('Office Ceiling', 'turn_off'), answer: 'The office light is off.' },
  { say: 'Thanks, that is all for today.', answer: 'You are welcome, enjoy the evening.' },
];

const isContext = (m: { content?: unknown }): boolean => typeof m.content === 'string' && m.content.startsWith(TURN_CONTEXT_MARK);

/**
 * The step's calls, one per round. Without the loader (the legacy layout
 * offers every tool and no tools_load/tools_call) the model calls the tool
 * directly.
 */
function callsOf(step: Step, loader = true): Call[] {
  const calls = step.calls ?? (step.tool ? [step.tool] : []);
  if (loader) return calls;
  return calls.filter((c) => c.name !== 'tools_load').map((c) => (c.name === 'tools_call' ? { name: String(c.arguments.name), arguments: c.arguments.arguments as Record<string, unknown> } : c));
}

/** Whether a request is a compaction's summary request (src/kernel/compaction.ts), not a turn's. */
const isCompaction = (req: ReceivedRequest): boolean => String(req.body?.messages?.at(-1)?.content ?? '').startsWith(COMPACTION_REQUEST_MARK);

/**
 * The scripted model's summary: the previous summary's facts and every
 * "Remember that ..." said in the part leaving the prompt, a one-line
 * background, the rest empty. Deterministic from the request.
 */
function scriptedSummary(req: ReceivedRequest): Reply {
  const msgs = req.body?.messages ?? [];
  const prev = msgs.find((m) => String(m.content ?? '').startsWith(SUMMARY_MARK));
  const facts = /^Facts: (.*)$/m.exec(String(prev?.content ?? ''))?.[1]?.split('; ') ?? [];
  for (const m of msgs) {
    const said = /^Remember that (.*?)\.?$/.exec(String(m.content ?? ''));
    if (m.role === 'user' && said) facts.push(said[1]!);
  }
  return { content: ['Background: A household day at home: lights, doors, heating and cooking questions.', `Facts: ${facts.join('; ')}`, 'Relations:', 'Open items:', 'Decisions:'].join('\n') };
}

/** The scripted model: the step's tool calls, one per round, then its answer (a compaction request: the summary). */
function scripted(req: ReceivedRequest): Reply {
  if (isCompaction(req)) return scriptedSummary(req);
  const msgs = req.body?.messages ?? [];
  let u = msgs.length - 1;
  while (u >= 0 && !(msgs[u]!.role === 'user' && !isContext(msgs[u]!))) u--;
  const said = String(msgs[u]?.content ?? '');
  const step = [...SCRIPT, ...HELD_OUT].find((s) => s.say === said);
  if (!step) return { content: 'All right.' };
  const done = msgs.slice(u + 1).filter((m) => m.role === 'tool').length;
  const next = callsOf(step, (req.body?.tools ?? []).some((t) => t.function?.name === 'tools_call'))[done];
  return next ? { tool_calls: [next] } : { content: step.answer };
}

/** The tools a step runs, as the turn reports them (a tools_call as the tool it called). */
const ranOf = (step: Step, loader: boolean): string[] => callsOf(step, loader).map((c) => (c.name === 'tools_call' ? String(c.arguments.name) : c.name));

function quantile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}

interface Figures {
  turns: number;
  llmTurns: number;
  tokens: number[];
  offered: number[];
  tools: number[];
  history: number[];
  fresh: number[];
  sharedPct: number[];
  /** Turns that ran a tool outside the core (through tools_call). */
  loaderTurns: number;
  /** The tools the last request offered. */
  offeredTools: string[];
  /** Summary requests (compactions) during the run. */
  compactions: number;
  /** Per follow-up turn: whether it compacted (its sharedPct entry then measures the request after the summary's). */
  compacted: boolean[];
}

/** What every ordinary turn on the cli channel offers: the default core (the home, timers and lists plugins register all of it) and the loader; in output mode auto (the default) not the cli channel's own tool: the reply goes there. */
const CORE_OFFER = [...DEFAULT_CORE_TOOLS, TOOLS_LOAD, TOOLS_CALL];

/** The request without its conversation history: the system message, then everything from the turn context on. */
function withoutHistory(body: ReceivedBody): ReceivedBody {
  const msgs = body.messages ?? [];
  // The legacy layout has no turn context: its history ends before the new message. Earlier turns' contexts are history.
  const c = msgs.findLastIndex(isContext);
  return { ...body, messages: [...(msgs[0]?.role === 'system' ? [msgs[0]] : []), ...msgs.slice(c < 0 ? -1 : c)] };
}

/** Run the script on a fresh service with `layout`; per-turn figures of each turn's first request. */
async function measure(layout: PromptLayout, enc: Tiktoken, script: readonly Step[] = SCRIPT): Promise<Figures> {
  setPromptLayout(layout);
  // PROMPT_BAND / PROMPT_TAIL / PROMPT_SUMMARY override core.agent.prompt_band / compaction_tail_tokens / compaction_summary_tokens (to compare choices).
  const env: Record<string, string> = {};
  if (process.env.PROMPT_BAND) env.HOMEAGENT__CORE__AGENT__PROMPT_BAND = process.env.PROMPT_BAND;
  if (process.env.PROMPT_TAIL) env.HOMEAGENT__CORE__AGENT__COMPACTION_TAIL_TOKENS = process.env.PROMPT_TAIL;
  if (process.env.PROMPT_SUMMARY) env.HOMEAGENT__CORE__AGENT__COMPACTION_SUMMARY_TOKENS = process.env.PROMPT_SUMMARY;
  if (process.env.PROMPT_DOC_SIM) env.HOMEAGENT__CORE__MEMORY__PROMPT_DOC_MIN_SIMILARITY = process.env.PROMPT_DOC_SIM;
  if (process.env.PROMPT_DOCS) env.HOMEAGENT__CORE__MEMORY__PROMPT_DOCS = process.env.PROMPT_DOCS;
  const e2e = await startE2E({ refuseUnofferedTools: true, env });
  const f: Figures = { turns: 0, llmTurns: 0, tokens: [], offered: [], tools: [], history: [], fresh: [], sharedPct: [], loaderTurns: 0, offeredTools: [], compactions: 0, compacted: [] };
  try {
    // Every tool the service registers is described for a 3B model: short, one example, and the example is valid arguments.
    for (const name of e2e.app.kernel.tools.names()) {
      const d = e2e.app.kernel.tools.get(name)!;
      const example = /Example: (\{.*\})$/.exec(d.description);
      if (d.description.length > 300 || d.description.split('Example:').length !== 2 || !example || e2e.app.kernel.tools.validate(name, JSON.parse(example[1]!) as Record<string, unknown>)) {
        if (name !== TOOLS_LOAD) throw new Error(`${name}: not a short description ending in one valid example: ${d.description}`);
      }
    }
    e2e.llm.script(scripted);
    let previous: string | undefined;
    for (const step of script) {
      const before = e2e.llm.chatRequests().length;
      // The channel of `homeagent ask`: a registered output channel, so the reply is delivered.
      const r = await e2e.app.kernel.injectInput('cli', 'cli', step.say);
      if (r.status !== 'done' && r.status !== 'short_circuit') throw new Error(`"${step.say}": ${r.status} ${r.reply} ${r.error ?? ''} ${e2e.llm.refusals.map((x) => `refused ${x.tool}`).join(', ')}`);
      f.turns++;
      const all = e2e.llm.chatRequests().slice(before);
      const compactions = all.filter(isCompaction).length;
      f.compactions += compactions;
      const reqs = all.filter((q) => !isCompaction(q));
      if (reqs.length) {
        // Every scripted call ran, and without error (a local intent may have answered a command instead).
        const ran = r.tools.map((t) => t.name);
        const bad = r.tools.filter((t) => t.is_error);
        if (JSON.stringify(ran) !== JSON.stringify(ranOf(step, layout === 'stable')) || bad.length) throw new Error(`"${step.say}": ran ${ran.join(', ') || 'nothing'} (scripted ${ranOf(step, layout === 'stable').join(', ') || 'nothing'})${bad.map((t) => `; ${t.name}: ${t.result}`).join('')}`);
        if (callsOf(step).some((c) => c.name === 'tools_call')) f.loaderTurns++;
        // Every request of the turn offered the core, the cli channel's tool and the loader, the same bytes each time.
        for (const q of reqs) {
          const names = (q.body!.tools ?? []).map((t) => t.function?.name ?? '');
          if (layout === 'stable' && JSON.stringify(names) !== JSON.stringify(CORE_OFFER)) throw new Error(`"${step.say}" offered ${names.join(', ')}, not the core ${CORE_OFFER.join(', ')}`);
          f.offeredTools = names;
        }
        const body = reqs[0]!.body!;
        const text = renderRequest(body);
        if (process.env.PROMPT_DUMP && f.llmTurns === Number(process.env.PROMPT_DUMP)) console.log(text);
        const total = enc.encode(text).length;
        const offered = enc.encode(renderRequest(withoutHistory(body))).length;
        f.llmTurns++;
        f.tokens.push(total);
        f.offered.push(offered);
        f.tools.push(enc.encode(renderTools(body)).length);
        f.history.push(total - offered);
        if (previous !== undefined) {
          const shared = enc.encode(text.slice(0, commonPrefixLength(previous, text))).length;
          f.fresh.push(total - shared);
          f.sharedPct.push((100 * shared) / total);
          f.compacted.push(compactions > 0);
        } else f.fresh.push(total);
        if (process.env.PROMPT_TRACE) {
          console.log(`  turn ${f.turns} ${layout}: ${total} tokens (history ${total - offered}), new ${f.fresh.at(-1)}${compactions ? ', compacted' : ''}: ${step.say}`);
          if (previous !== undefined && process.env.PROMPT_TRACE === 'diff') {
            const at = commonPrefixLength(previous, text);
            console.log(`    was: ${JSON.stringify(previous.slice(at - 40, at + 120))}\n    now: ${JSON.stringify(text.slice(at - 40, at + 120))}`);
          }
        }
      }
      // The model server's cache holds the last request it read (a later round of the same turn included).
      const last = e2e.llm.chatRequests().at(-1);
      if (last && e2e.llm.chatRequests().length > before) previous = renderRequest(last.body!);
    }
    if (e2e.llm.refusals.length) throw new Error(`the test server refused calls of tools not offered: ${e2e.llm.refusals.map((x) => x.tool).join(', ')}`);
  } finally {
    await e2e.close();
  }
  return f;
}

/** Print the figures. */
export async function run(): Promise<void> {
  const enc = new Tiktoken(o200k);
  const stable = await measure('stable', enc);
  const legacy = await measure('legacy', enc);
  setPromptLayout('stable');
  const line = (name: string, f: (x: Figures) => number, unit: string, digits = 0): void => {
    console.log(`prompt.${name}: ${f(stable).toFixed(digits)} ${unit}`);
    console.log(`prompt.${name}.legacy: ${f(legacy).toFixed(digits)} ${unit}`);
  };
  const ordinary = (x: Figures): number[] => x.sharedPct.filter((_, i) => !x.compacted[i]);
  console.log(`prompt.turns: ${stable.turns} (${stable.llmTurns} reached the model; legacy ${legacy.llmTurns}); ${stable.loaderTurns} ran a tool outside the core through tools_call; no call refused`);
  console.log(`prompt.offered_tools: ${stable.offeredTools.join(', ')} (every request; legacy ${legacy.offeredTools.length} tools)`);
  line('tokens_ordinary_turn', (x) => quantile(x.tokens, 0.5), 'tokens');
  line('tokens_offered', (x) => quantile(x.offered, 0.5), 'tokens');
  line('tokens_tools', (x) => quantile(x.tools, 0.5), 'tokens');
  line('tokens_history', (x) => quantile(x.history, 0.5), 'tokens');
  line('new_tokens_per_turn', (x) => quantile(x.fresh.slice(1), 0.5), 'tokens');
  line('new_tokens_per_turn_p90', (x) => quantile(x.fresh.slice(1), 0.9), 'tokens');
  console.log(`prompt.compactions: ${stable.compactions} (in ${stable.compacted.filter(Boolean).length} of ${stable.compacted.length} follow-up turns; legacy ${legacy.compactions})`);
  line('shared_prefix_pct', (x) => quantile(x.sharedPct, 0.5), '%', 1);
  line('shared_prefix_pct_no_compaction', (x) => quantile(ordinary(x), 0.5), '%', 1);
  line('shared_prefix_pct_min', (x) => Math.min(...x.sharedPct), '%', 1);
  line('follow_up_turns_at_or_above_90pct', (x) => (100 * x.sharedPct.filter((p) => p >= 90).length) / x.sharedPct.length, '%');
  // The held-out conversation (HELD_OUT: the settings were not chosen on it).
  setPromptLayout('stable');
  const held = await measure('stable', enc, HELD_OUT);
  setPromptLayout('stable');
  console.log(`prompt.heldout.turns: ${held.turns} (${held.llmTurns} reached the model)`);
  console.log(`prompt.heldout.tokens_ordinary_turn: ${quantile(held.tokens, 0.5).toFixed(0)} tokens`);
  console.log(`prompt.heldout.new_tokens_per_turn: ${quantile(held.fresh.slice(1), 0.5).toFixed(0)} tokens`);
  console.log(`prompt.heldout.new_tokens_per_turn_p90: ${quantile(held.fresh.slice(1), 0.9).toFixed(0)} tokens`);
  console.log(`prompt.heldout.compactions: ${held.compactions} (in ${held.compacted.filter(Boolean).length} of ${held.compacted.length} follow-up turns)`);
  console.log(`prompt.heldout.shared_prefix_pct: ${quantile(held.sharedPct, 0.5).toFixed(1)} %`);
}
