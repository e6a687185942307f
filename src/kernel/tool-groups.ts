/**
 * Only the tools a turn needs (issue 19; seed 002 百工: each run exposes the
 * smallest approved schema). An ordinary turn offers a small core: the tools
 * named in core.agent.core_tools (device control and state, timers, memory
 * recall and commit), the tools of the output channel in use
 * (ToolDef.channel), and two stable tools that reach everything else:
 *
 *   tools_load {group}              the group's schemas, as a tool result
 *   tools_call {name, arguments}    calls any registered tool
 *
 * Every other tool sits in a group (ToolDef.group, by default the name of the
 * plugin that registered it) and is brought in by tools_load. What a group
 * brings arrives as a tool result in the history, never as a change to the
 * tool list, so the bytes before the history stay the same on later turns
 * and the model server's cache stays useful. The turn unwraps a tools_call
 * (`unwrapToolsCall`) and runs the inner call through before_toolcall,
 * validation (the same ajv schema as a direct call), execution and
 * after_toolcall, exactly like a direct call.
 */
import type { ToolCall, ToolSchema } from './llm-types.js';
import type { SettingsAPI } from './settings-types.js';
import type { ToolDef } from './stage-types.js';
import { defineTool } from './tool-schema.js';
import { toolSchema, type ToolRegistry } from './tool-registry.js';

/** The loader tool's name. */
export const TOOLS_LOAD = 'tools_load';
/** The caller tool's name. */
export const TOOLS_CALL = 'tools_call';

/** core.agent.core_tools' default: the tools an ordinary turn offers (besides the output channel in use and the two loader tools). */
export const DEFAULT_CORE_TOOLS: readonly string[] = ['device_control', 'device_state', 'timer', 'list', 'memory_recall', 'memory_commit'];

/** What the built-in groups are for, as tools_load's description names them. Plugins' groups are named by their tools. */
const GROUP_PURPOSE: Record<string, string> = {
  admin: 'fix or forget memory, channel help',
  knowledge: 'notes, documents',
  agents: 'helper agent',
  output: 'other channels',
  people: 'traits, relations',
};

/** The core tool names from core.agent.core_tools (DEFAULT_CORE_TOOLS when the setting is absent or not a list of names). */
export function coreToolNames(settings: SettingsAPI): string[] {
  let v: unknown;
  try {
    v = settings.get('core.agent.core_tools');
  } catch {
    v = undefined;
  }
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : [...DEFAULT_CORE_TOOLS];
}

/**
 * The tools an ordinary turn from `channel` offers, in a fixed order: the
 * core list's tools (in the list's order, those registered), then the tools
 * of `channel` (registration order), then tools_load and tools_call when
 * some registered tool is outside that set. Never depends on what earlier
 * turns loaded. `mode` 'auto' (output mode, DESIGN.md "Output") leaves out
 * `output_send__<channel>`: the plain reply goes there already.
 */
export function offeredToolNames(tools: ToolRegistry, core: readonly string[], channel: string, mode: 'auto' | 'explicit' = 'explicit'): string[] {
  const out = core.filter((n) => tools.has(n) && n !== TOOLS_LOAD && n !== TOOLS_CALL);
  // Output mode auto (DESIGN.md "Output"): the plain reply already goes to the input's channel, so its output_send tool
  // would only be a second way there; it stays loadable (group output) for a turn that needs its type or meta.
  const own = mode === 'auto' ? `output_send__${channel}` : undefined;
  for (const n of tools.names()) if (tools.get(n)?.channel === channel && n !== own && !out.includes(n)) out.push(n);
  const outside = tools.names().some((n) => !out.includes(n) && n !== TOOLS_LOAD && n !== TOOLS_CALL);
  if (outside) for (const n of [TOOLS_LOAD, TOOLS_CALL]) if (tools.has(n)) out.push(n);
  return out;
}

/**
 * The groups tools_load offers, sorted by name: each group with a tool that
 * is not in the core list (a channel's tool counts as outside: it is in the
 * core only on that channel's turns). Independent of the turn's channel, so
 * tools_load's description is the same on every turn.
 */
export function loadableGroups(tools: ToolRegistry, core: readonly string[]): Array<{ group: string; tools: string[] }> {
  return tools
    .groups()
    .map(({ group, tools: names }) => ({ group, tools: names.filter((n) => n !== TOOLS_LOAD && n !== TOOLS_CALL) }))
    .filter(({ tools: names }) => names.some((n) => !core.includes(n) || tools.get(n)?.channel !== undefined));
}

/** tools_load's description: what it does, the groups it loads (built-in ones by purpose, others by their tools), one example. */
export function toolsLoadDescription(groups: Array<{ group: string; tools: string[] }>): string {
  const list = groups.map((g) => `${g.group} (${GROUP_PURPOSE[g.group] ?? g.tools.join(', ')})`).join('; ');
  return `More tools when none fits (then tools_call). Groups: ${list}. Example: {"group":"knowledge"}`;
}

/** The schema of tools_call (the one definition: ajv validates it, the turn reads it). */
const TOOLS_CALL_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    arguments: { type: 'object' },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

/**
 * The two stable tools over `tools`, for the kernel to register (group
 * `core`). tools_load answers with the group's tool schemas (one JSON line
 * each, as the tool list carries them); an unknown group is an error naming
 * the groups. A tool's own name is accepted as a group of one. tools_call's
 * handler runs only where a caller did not unwrap the call (the turn does,
 * `unwrapToolsCall`): it validates and executes the inner call through the
 * registry.
 */
export function loaderTools(tools: ToolRegistry, settings: SettingsAPI): ToolDef[] {
  return [
    {
      ...defineTool({
        name: TOOLS_LOAD,
        description: 'Load more tools.',
        parameters: { type: 'object', properties: { group: { type: 'string', minLength: 1 } }, required: ['group'], additionalProperties: false },
        handler: (args) => loadGroup(tools, coreToolNames(settings), args.group.trim()),
      }),
      group: 'core',
    },
    {
      ...defineTool({
        name: TOOLS_CALL,
        description: 'Call a tool that tools_load returned. Example: {"name":"knowledge_search","arguments":{"query":"wifi password"}}',
        parameters: TOOLS_CALL_SCHEMA,
        handler: async (args, ctx) => {
          const inner = unwrapToolsCall({ id: ctx.call_id, type: 'function', function: { name: TOOLS_CALL, arguments: args } });
          if (!inner || 'error' in inner) throw new Error(inner ? inner.error : 'not a tools_call');
          const r = await tools.execute(inner.call.function.name, inner.call.function.arguments, ctx);
          if (r.is_error) throw new Error(r.content.replace(/^error: /, ''));
          return r.images?.length ? { kind: 'tool_output', text: r.content, images: r.images } : r.content;
        },
      }),
      group: 'core',
    },
  ];
}

/** tools_load's answer for `group` (a group name, or one tool's name). Throws an Error naming the groups when it is neither. */
export function loadGroup(tools: ToolRegistry, core: readonly string[], group: string): string {
  const groups = loadableGroups(tools, core);
  const g = groups.find((x) => x.group === group) ?? tools.groups().find((x) => x.group === group);
  const names = g ? g.tools.filter((n) => n !== TOOLS_LOAD && n !== TOOLS_CALL) : tools.has(group) && group !== TOOLS_LOAD && group !== TOOLS_CALL ? [group] : [];
  if (names.length === 0) throw new Error(`no tool group "${group}"; groups: ${groups.map((x) => x.group).join(', ')}`);
  const schemas: ToolSchema[] = names.map((n) => toolSchema(tools.get(n)!));
  return [`Tools of ${g ? `group ${group}` : group}. Call one with tools_call {"name":..., "arguments":{...}}.`, ...schemas.map((s) => JSON.stringify(s.function))].join('\n');
}

/**
 * The call inside a tools_call: `{ call }` with the outer call's id, the
 * inner name and arguments (arguments given as a JSON string are parsed;
 * absent ones are {}); `{ error }` when the outer arguments are not a
 * tools_call's (no name, arguments not an object, or a call of tools_call or
 * tools_load itself); undefined when `call` is not a tools_call.
 */
export function unwrapToolsCall(call: ToolCall): { call: ToolCall } | { error: string } | undefined {
  if (call.function.name !== TOOLS_CALL) return undefined;
  const a = call.function.arguments ?? {};
  const name = typeof a.name === 'string' ? a.name.trim() : '';
  if (!name) return { error: 'tools_call needs "name": the tool to call' };
  if (name === TOOLS_CALL || name === TOOLS_LOAD) return { error: `call ${name} directly, not through tools_call` };
  let inner: unknown = a.arguments ?? {};
  if (typeof inner === 'string') {
    try {
      inner = inner.trim() ? JSON.parse(inner) : {};
    } catch {
      return { error: `tools_call "arguments" must be a JSON object, got ${JSON.stringify(inner).slice(0, 80)}` };
    }
  }
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return { error: 'tools_call "arguments" must be a JSON object' };
  return { call: { id: call.id, type: 'function', function: { name, arguments: inner as Record<string, unknown> } } };
}

/**
 * The schemas an ordinary turn offers (offeredToolNames), with tools_load's
 * description naming the loadable groups. `allow` leaves tools out (the
 * internal channel sends to no output channel); `mode`: the output mode
 * (auto leaves the input channel's own output_send tool out).
 */
export function offeredSchemas(tools: ToolRegistry, settings: SettingsAPI, channel: string, allow: (def: ToolDef) => boolean = () => true, mode: 'auto' | 'explicit' = 'explicit'): ToolSchema[] {
  const core = coreToolNames(settings);
  const names = offeredToolNames(tools, core, channel, mode).filter((n) => allow(tools.get(n)!));
  return tools.schemasOf(names).map((s) => (s.function.name === TOOLS_LOAD ? { ...s, function: { ...s.function, description: toolsLoadDescription(loadableGroups(tools, core)) } } : s));
}
