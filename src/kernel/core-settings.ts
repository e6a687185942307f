/**
 * The core.* settings the kernel itself reads, with defaults, types and
 * descriptions (seed 000 §10 RegisterDefault). Plugins register their own
 * plugin.<name>.* keys.
 */
import type { SettingsAPI } from './settings-types.js';
import { DEFAULT_CORE_TOOLS } from './tool-groups.js';

/** Largest context window a setting may ask for, tokens (the largest models' windows are about a million). */
export const MAX_CONTEXT_WINDOW = 1_048_576;

/**
 * Smallest context window a setting may ask for, tokens (0 stays "the model's own"): Ollama's smallest default
 * num_ctx. The box's system prompt with its tool schemas is about 2300 tokens on the demo home (a tester's
 * `doctor`), so a window under this cannot hold it; whether a larger one holds the prompts really sent is what
 * `homeagent doctor` checks (the largest recent prompt in the run log).
 */
export const MIN_CONTEXT_WINDOW = 2048;

/** A context window setting's check: 0 (the model's own) or at least MIN_CONTEXT_WINDOW tokens; the reason reads after "value " (ConfigRegistry). */
export function contextWindowCheck(value: unknown): string | undefined {
  return typeof value === 'number' && value > 0 && value < MIN_CONTEXT_WINDOW
    ? `must be 0 (the model's own window) or at least ${MIN_CONTEXT_WINDOW} tokens: ${value} cannot hold the box's system prompt and tools (homeagent doctor compares the window with the prompts sent)`
    : undefined;
}

/** Register the kernel's settings. Idempotent. */
export function registerCoreSettings(s: SettingsAPI): void {
  s.register({ key: 'core.agent.max_tool_rounds', type: 'integer', default: 10, min: 1, max: 100, description: 'Most LLM rounds of one turn\'s tool loop (seed 000 §3 max_tool_rounds).' });
  s.register({ key: 'core.agent.max_input_chars', type: 'integer', default: 4000, min: 100, max: 1000000, description: 'Longest input text accepted; longer inputs are cut there (a spoken or typed message is far shorter; this protects memory and prompt).' });
  s.register({ key: 'core.agent.stage_timeout_ms', type: 'integer', default: 5000, min: 10, description: 'Time limit of one stage handler, ms; a handler past it is logged and ignored.' });
  s.register({ key: 'core.agent.tool_timeout_ms', type: 'integer', default: 30000, min: 10, description: 'Default time limit of one tool call, ms.' });
  s.register({ key: 'core.agent.context_window', type: 'integer', default: 0, min: 0, max: MAX_CONTEXT_WINDOW, check: contextWindowCheck, description: "Context window in tokens for the prompt budget; 0 = the LLM source's (Ollama: core.llm.num_ctx within the model's own window from /api/show), else 8192. Set it no larger than what the source is sent, or Ollama cuts the prompt's start (homeagent doctor checks)." });
  s.register({
    key: 'core.agent.prompt_band',
    type: 'integer',
    default: 1575,
    min: 0,
    description: "Most tokens (estimated) of a turn's prompt: when the projected prompt would exceed it, the older conversation is compacted into a summary (issue 19, seed 002 §7; one extra LLM call); 0 = the context window's working band (window x 0.8). Never above that band. Lower keeps prompts shorter but compacts more often. The default keeps an ordinary turn under 1,500 tokens, compacting about every second or third turn of a conversation (npm run bench -- prompt).",
  });
  s.register({ key: 'core.agent.compaction_tail_tokens', type: 'integer', default: 60, min: 0, description: 'Tokens (estimated) of the newest conversation a compaction keeps word for word (it starts at a turn: when no turn start fits, the last one within twice this; less when the band leaves less room); the rest is summarised. More keeps more verbatim but leaves the band fuller, so the next compaction comes sooner.' });
  s.register({ key: 'core.agent.compaction_summary_tokens', type: 'integer', default: 160, min: 40, max: 4000, description: 'Most tokens (estimated) of the conversation summary a compaction writes (background, facts, relations, open items, decisions).' });
  s.register({ key: 'core.agent.persona_path', type: 'string', default: '', description: 'Persona file; empty = data/personal.md of the installation.' });
  s.register({ key: 'core.agent.llm_unavailable_message', type: 'string', default: "Sorry, I can't reach my language model right now, so I can't answer that. Commands for the devices I know, timers and the time still work.", description: 'Said when every LLM source failed (after an English input).' });
  s.register({ key: 'core.agent.llm_unavailable_message_zh', type: 'string', default: '抱歉，我现在连不上语言模型，没法回答这个。已知设备的控制、计时器和时间仍然可以用。', description: 'Said when every LLM source failed, after a Chinese input.' });
  // Limits of what one turn accepts (issue 14): a runaway model or tool cannot fill the memory of a Pi or its databases.
  s.register({
    key: 'core.agent.max_reply_chars',
    type: 'integer',
    default: 20000,
    min: 100,
    max: 10000000,
    description: 'Most characters the model may write in one LLM round (answer, reasoning and tool-call arguments together); past it the stream is closed, the text up to here kept, and the user told the answer was too long.',
  });
  s.register({
    key: 'core.agent.max_tool_result_bytes',
    type: 'integer',
    default: 32768,
    min: 256,
    max: 10000000,
    description: 'Longest tool result fed back to the model and recorded, bytes (UTF-8); a longer one is cut there with a note saying so.',
  });
  s.register({
    key: 'core.agent.max_tool_calls',
    type: 'integer',
    default: 16,
    min: 1,
    max: 1000,
    description: 'Most tool calls the model may ask for in one LLM round; past it the stream is closed, none of the calls run, and the user is told.',
  });
  s.register({
    key: 'core.output.first_clause',
    type: 'boolean',
    default: true,
    description: 'Stream channels (the speaker) get the first clause of a reply as soon as it is complete (up to its first comma, colon or dash), so speech starts before the first sentence is finished.',
  });
  s.register({ key: 'core.output.mode', type: 'string', default: 'auto', enum: ['auto', 'explicit'], description: "auto: plain model text goes to the input's channel (sentence by sentence to stream channels); explicit: only output_send__X calls reach a channel (seed rule)." });
  s.register({ key: 'core.scheduler.preempt_cooldown_ms', type: 'integer', default: 2000, min: 0, description: 'A task preempted less than this long ago cannot be preempted again, ms (seed 001: 2 s).' });
  s.register({ key: 'core.scheduler.busy_feedback_ms', type: 'integer', default: 300000, min: 0, description: 'After the agent has been busy this long, waiting inputs get an immediate busy message, ms; 0 = never (seed 001: 5 min).' });
  s.register({ key: 'core.scheduler.busy_message', type: 'string', default: "I'm still busy with something else. One moment, please.", description: 'The busy message.' });
  s.register({ key: 'core.plugins.restart_backoff_ms', type: 'integer', default: 1000, min: 10, description: 'Wait before the first restart of a plugin that crashed or failed to start, ms; it doubles with each failure in a row.' });
  s.register({ key: 'core.plugins.restart_backoff_max_ms', type: 'integer', default: 60000, min: 10, description: 'Longest wait between restarts of a failing plugin, ms; a plugin that ran this long without failing starts over at core.plugins.restart_backoff_ms.' });
  s.register({ key: 'core.plugins.start_timeout_ms', type: 'integer', default: 15000, min: 10, description: 'Time limit for one plugin to start or stop, ms; past it the plugin is marked failed and the others go on.' });
  // Process plugins (issue 17 "Process plugins"; src/plugins/external/process.ts).
  s.register({ key: 'core.plugins.call_timeout_ms', type: 'integer', default: 10000, min: 10, max: 600000, description: "Time limit of one call into a process plugin (a tool, an output), ms, unless its plugin.json sets call_timeout_ms; past it the call fails and the plugin is restarted." });
  s.register({ key: 'core.plugins.max_line_bytes', type: 'integer', default: 1048576, min: 1024, description: 'Longest line a process plugin may write on stdout, bytes; a longer one counts as a crash (the plugin is killed and restarted).' });
  s.register({ key: 'core.plugins.max_lines_per_s', type: 'integer', default: 5000, min: 10, description: 'Most lines a process plugin may write on stdout in one second; more is a flood and counts as a crash.' });
  s.register({ key: 'core.plugins.max_garbage_lines', type: 'integer', default: 100, min: 1, description: 'Most stdout lines that are not JSON-RPC a process plugin may write within 10 s (each is logged and ignored); more counts as a crash.' });
  s.register({ key: 'core.plugins.stderr_lines_per_s', type: 'integer', default: 20, min: 1, description: "Most stderr lines of one process plugin logged per second; the rest are counted and dropped." });
  s.register({ key: 'core.plugins.kill_grace_ms', type: 'integer', default: 1500, min: 10, description: 'When a process plugin is stopped: wait this long after shutdown for it to exit, then SIGTERM its process group, wait as long again, then SIGKILL it, ms.' });
  s.register({ key: 'core.plugins.sandbox', type: 'string', default: 'auto', enum: ['auto', 'off', 'required'], description: 'The bubblewrap sandbox of process plugins: auto = use it when bwrap works (else run them unsandboxed and say so), off = never, required = refuse to run process plugins without it.' });
  s.register({
    key: 'core.agent.core_tools',
    type: 'json',
    default: [...DEFAULT_CORE_TOOLS],
    description: 'The tools every turn offers the model (issue 19), besides the tools of the output channel in use and tools_load/tools_call, which bring in the other groups (admin, knowledge, agents, output, plugins) when a turn needs them.',
    check: (v) => (Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(x)) ? undefined : 'must be a list of tool names, e.g. ["device_control", "memory_recall"]'),
  });
  s.register({ key: 'core.people.speaker_ttl_min', type: 'integer', default: 10, min: 1, max: 1440, description: 'After "this is Anna" the speaker on that channel (or session) is Anna until this many minutes pass without an input there (issue 18 People).' });
  s.register({ key: 'core.child.max_tool_rounds', type: 'integer', default: 5, min: 1, max: 5, description: 'Most tool rounds of a spawn_child agent (seed 000 §9 Child Agent: 5).' });
}
