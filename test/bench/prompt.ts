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
 * Figures, for an ordinary turn's first request (turns a local intent
 * answers never reach the model and are not counted):
 *   prompt.tokens_ordinary_turn        p50 of the prompt's tokens
 *   prompt.new_tokens_per_turn         p50 of the tokens after the longest prefix shared with the previous request
 *   prompt.new_tokens_per_turn_p90     p90 of the same
 *   prompt.shared_prefix_pct           p50 share of the prompt shared with the previous request, follow-up turns
 *   prompt.shared_prefix_pct_min       the lowest share (a history block dropped, or the first turn after a local one)
 * each also as `<figure>.legacy`: the layout before issue 19 (time, channel
 * and recall in the system message, the timeline re-pruned every turn),
 * measured in the same run on a fresh service (src/kernel/prompt.ts setPromptLayout).
 * Targets: new tokens per ordinary turn p50 <= 300; shared prefix >= 90 %.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { setPromptLayout, type PromptLayout } from '../../src/kernel/prompt.js';
import type { ReceivedRequest, Reply } from '../support/llm-test-server.js';
import { startE2E } from '../support/e2e-home.js';
import { commonPrefixLength, renderRequest, TURN_CONTEXT_MARK } from '../kernel/prompt-render.js';

/** One scripted turn: what is said, the tool the model calls first (if any), its answer. */
interface Step {
  say: string;
  tool?: { name: string; arguments: Record<string, unknown> };
  answer: string;
}

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
  { say: 'Dim the standing light to about a third.', tool: ctl('Standing Light', 'turn_on', { brightness: 33 }), answer: 'The standing light is at 33 percent.' },
  { say: 'How humid is it outside?', tool: { name: 'device_state', arguments: { device: 'Outdoor Humidity' } }, answer: 'Outdoor humidity is 54 percent.' },
  { say: 'Any tips to get a toddler to sleep earlier?', answer: 'Keep a calm routine, dim lights an hour before, and the same bedtime every night.' },
  { say: 'Set the bed light to a warm low glow.', tool: ctl('Bed Light', 'turn_on', { brightness: 20, color: 'orange' }), answer: 'The bed light is glowing warm and low.' },
  { say: 'Remember that the plumber comes on Thursday at nine.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'plumber', relation: 'visits on', object: 'Thursday 9:00' }] } }, answer: "I'll remember the plumber on Thursday at nine." },
  { say: 'What can I cook with leftover rice?', answer: 'Fried rice: rice, an egg, peas, soy sauce, a hot pan.' },
  { say: 'Which lights are still on in the living room?', tool: { name: 'device_list', arguments: { room: 'Living Room', type: 'light' } }, answer: 'The standing light is on at 33 percent.' },
  { say: 'Open the sliding door halfway, it is stuffy.', tool: ctl('Sliding Door', 'set_position', { position: 50 }), answer: 'The sliding door is half open.' },
  { say: 'When is the plumber coming?', answer: 'Thursday at nine.' },
  { say: 'How do I get a wine stain out of a carpet?', answer: 'Blot it, pour on cold water and a little salt or baking soda, then blot again.' },
  { say: 'Close the sliding door again please.', tool: ctl('Sliding Door', 'close'), answer: 'The sliding door is closing.' },
  { say: 'Remember that the recycling goes out on Mondays.', tool: { name: 'memory_commit', arguments: { triples: [{ subject: 'recycling', relation: 'goes out on', object: 'Monday' }] } }, answer: "Noted: recycling on Mondays." },
  { say: 'What drinks should I get for Tom?', answer: 'Sparkling water, Tom prefers it.' },
  { say: 'Turn the thermostat down to nineteen for the night.', tool: ctl('EcoBee', 'set_temperature', { temperature: 19 }), answer: 'Set to 19 degrees.' },
  { say: 'Is everything locked up?', tool: { name: 'device_state', arguments: { device: 'Front Door' } }, answer: 'The front door is locked and the garage is closed.' },
  { say: 'Switch off the kitchen lights and the standing light.', tool: ctl('Kitchen Lights', 'turn_off'), answer: 'Kitchen lights are off; the standing light too.' },
  { say: 'Thanks, good night!', answer: 'Good night!' },
];

const isContext = (m: { content?: unknown }): boolean => typeof m.content === 'string' && m.content.startsWith(TURN_CONTEXT_MARK);

/** The scripted model: the step's tool call first, then its answer. */
function scripted(req: ReceivedRequest): Reply {
  const msgs = req.body?.messages ?? [];
  let u = msgs.length - 1;
  while (u >= 0 && !(msgs[u]!.role === 'user' && !isContext(msgs[u]!))) u--;
  const said = String(msgs[u]?.content ?? '');
  const step = SCRIPT.find((s) => s.say === said);
  if (!step) return { content: 'All right.' };
  const toolsDone = msgs.slice(u + 1).some((m) => m.role === 'tool');
  if (step.tool && !toolsDone) return { tool_calls: [step.tool] };
  return { content: step.answer };
}

function quantile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}

interface Figures {
  turns: number;
  llmTurns: number;
  tokens: number[];
  fresh: number[];
  sharedPct: number[];
}

/** Run the script on a fresh service with `layout`; per-turn figures of each turn's first request. */
async function measure(layout: PromptLayout, enc: Tiktoken): Promise<Figures> {
  setPromptLayout(layout);
  const e2e = await startE2E();
  const f: Figures = { turns: 0, llmTurns: 0, tokens: [], fresh: [], sharedPct: [] };
  try {
    e2e.llm.script(scripted);
    let previous: string | undefined;
    for (const step of SCRIPT) {
      const before = e2e.llm.chatRequests().length;
      const r = await e2e.app.kernel.injectInput('console', 'console', step.say);
      if (r.status !== 'done' && r.status !== 'short_circuit') throw new Error(`"${step.say}": ${r.status} ${r.reply}`);
      f.turns++;
      const reqs = e2e.llm.chatRequests().slice(before);
      if (reqs.length) {
        const text = renderRequest(reqs[0]!.body!);
        const total = enc.encode(text).length;
        f.llmTurns++;
        f.tokens.push(total);
        if (previous !== undefined) {
          const shared = enc.encode(text.slice(0, commonPrefixLength(previous, text))).length;
          f.fresh.push(total - shared);
          f.sharedPct.push((100 * shared) / total);
        } else f.fresh.push(total);
      }
      // The model server's cache holds the last request it read (a later round of the same turn included).
      const last = e2e.llm.chatRequests().at(-1);
      if (last && e2e.llm.chatRequests().length > before) previous = renderRequest(last.body!);
    }
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
  console.log(`prompt.turns: ${stable.turns} (${stable.llmTurns} reached the model; legacy ${legacy.llmTurns})`);
  line('tokens_ordinary_turn', (x) => quantile(x.tokens, 0.5), 'tokens');
  line('new_tokens_per_turn', (x) => quantile(x.fresh.slice(1), 0.5), 'tokens');
  line('new_tokens_per_turn_p90', (x) => quantile(x.fresh.slice(1), 0.9), 'tokens');
  line('shared_prefix_pct', (x) => quantile(x.sharedPct, 0.5), '%', 1);
  line('shared_prefix_pct_min', (x) => Math.min(...x.sharedPct), '%', 1);
  line('follow_up_turns_at_or_above_90pct', (x) => (100 * x.sharedPct.filter((p) => p >= 90).length) / x.sharedPct.length, '%');
}
