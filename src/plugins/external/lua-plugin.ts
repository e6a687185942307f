/**
 * Lua script plugins (issue 17 "Lua script plugins"; seed 001 "Lua script
 * plugin loading"): `main.lua` (the manifest's `entry`) runs in the same
 * sandboxed fengari VM as the protocol adapters (src/lua/vm.ts, host.ts:
 * instruction and time budget per call, no io/os/require/bytecode) and
 * registers through a global `sdk` table:
 *
 *   sdk.name                                  the plugin's name
 *   sdk.register_tool{name=, description=, parameters=, handler=function(args) return "text" end}
 *   sdk.register_stage(stage, function(ctx) return {deny=true, deny_reason="..."} end)
 *   sdk.subscribe(event, function(payload) ... end)
 *   sdk.publish(event, payload)               (events:publish)
 *   sdk.setting(key)                          its own setting plugin.<name>.<key>
 *   log(level, msg), json.encode/decode       as for adapters
 *   http_get/http_post                        only with the `network` capability
 *
 * While main.lua runs, registrations are only collected; once it has run
 * without error they are applied through the restricted SDK (each checked
 * against the approved capabilities). A handler runs later, each call with
 * its own budget: a tool whose handler loops forever is stopped by the
 * budget and answers the model with a tool error; the box goes on.
 *
 * A stage handler gets a copy of the context's readable fields (`stage`,
 * `input` {text, channel, user}, `raw_message`, `tool_call` {name,
 * arguments}, `tool_result` {name, content, is_error}, `final_text`,
 * `llm_text`) and returns nil or a table of changes, applied to the real
 * context under the stage's write rights (seed 000 §3): `raw_message`,
 * `deny`, `deny_reason`, `response`, `final_text`, `skip_output`,
 * `tool_result_content`.
 *
 * Reloading (`prepare()` then a restart by the host, between turns) is
 * atomic: the new file is loaded in a new VM first; when it fails, the old
 * VM and its registrations stay and the error is reported.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { StageContext, StageName } from '../../kernel/stage-types.js';
import type { EventType } from '../../kernel/events.js';
import type { JsonSchema } from '../../kernel/llm-types.js';
import { HomeAgentError } from '../../kernel/errors.js';
import { createLogger } from '../../kernel/log.js';
import { LuaVM } from '../../lua/vm.js';
import type { PluginManifest } from './manifest.js';
import { restrictSdk, type ExternalSDK } from './restricted-sdk.js';

/** Options of a Lua plugin. */
export interface LuaPluginOptions {
  manifest: PluginManifest;
  /** The plugin's folder (holds plugin.json and main.lua). */
  dir: string;
  /** Approved capabilities (used when the SDK it gets is not restricted already). */
  approved?: readonly string[];
  /** Lua instructions one call may run (default 2,000,000, the adapters' budget). */
  instructionBudget?: number;
  /** Running time one call may use, ms (default 50, as for adapters: a spinning handler holds the event loop at most this long). */
  timeBudgetMs?: number;
}

/** Registrations main.lua made (what the wrapper returns). */
type LuaRegistration =
  | { kind: 'tool'; id: number; name: string; description: string; parameters?: unknown }
  | { kind: 'stage'; id: number; stage: string }
  | { kind: 'subscription'; id: number; event: string };

/** The wrapper module: the `sdk` table, and the functions the host calls. */
const WRAPPER = `
local regs, handlers, n, loading = {}, {}, 0, true
local function add(kind, def, fn)
  if not loading then error("sdk: register while main.lua runs, not later", 3) end
  if type(fn) ~= "function" then error("sdk: a handler function is needed", 3) end
  n = n + 1
  handlers[n] = fn
  def.id = n
  def.kind = kind
  regs[#regs + 1] = def
end
sdk = {
  name = host.plugin_name(),
  register_tool = function(t)
    if type(t) ~= "table" or type(t.name) ~= "string" then
      error("sdk.register_tool{name=..., description=..., parameters=..., handler=function(args) ... end}", 2)
    end
    add("tool", { name = t.name, description = t.description or "", parameters = t.parameters }, t.handler)
  end,
  register_stage = function(stage, fn)
    if type(stage) ~= "string" then error("sdk.register_stage(stage, function(ctx) ... end)", 2) end
    add("stage", { stage = stage }, fn)
  end,
  subscribe = function(event, fn)
    if type(event) ~= "string" then error("sdk.subscribe(event, function(payload) ... end)", 2) end
    add("subscription", { event = event }, fn)
  end,
  publish = function(event, payload) return host.publish(event, payload) end,
  setting = function(key) return host.setting(key) end,
}
local M = {}
function M.__load(src, chunk)
  local f, err = load(src, chunk, "t")
  if not f then error(err, 0) end
  f()
  loading = false
  return json.array(regs)
end
function M.__call(id, ...)
  return handlers[id](...)
end
return M
`;

/** A loaded main.lua: its VM and what it registered. */
interface Loaded {
  vm: LuaVM;
  regs: LuaRegistration[];
}

/** A plugin whose code is a Lua script. */
export class LuaPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  private pending?: Loaded;
  private current?: Loaded;
  private unsubscribers: Array<() => void> = [];
  /** Set while started: where host.publish / host.setting go. */
  private sdk?: ExternalSDK;

  constructor(readonly opts: LuaPluginOptions) {
    this.name = opts.manifest.name;
  }

  /** The script's file. */
  get file(): string {
    const e = this.opts.manifest.entry;
    return path.join(this.opts.dir, typeof e === 'string' ? e : 'main.lua');
  }

  /**
   * Load main.lua into a new VM now (a reload's first half): throws
   * AdapterError (syntax, runtime, budget) naming the line, or
   * HomeAgentError LUA_PLUGIN for a bad registration; nothing running
   * changes. The next start() uses it.
   */
  prepare(): void {
    const loaded = this.load();
    this.pending?.vm.close();
    this.pending = loaded;
  }

  start(sdk: PluginSDK): void {
    const ext = 'allowed' in sdk ? (sdk as ExternalSDK) : restrictSdk(sdk, this.name, this.opts.approved ?? []);
    const loaded = this.pending ?? this.load();
    this.pending = undefined;
    this.sdk = ext;
    this.current = loaded;
    // Checked and applied one by one: a refusal throws, the start fails and the host removes what was applied.
    for (const r of loaded.regs) this.apply(ext, loaded.vm, r);
  }

  stop(): void {
    for (const u of this.unsubscribers.splice(0)) u();
    this.current?.vm.close();
    this.current = undefined;
    this.sdk = undefined;
  }

  /** Tool, stage and event names main.lua registered (for tests and `plugins`). */
  registrations(): Array<{ kind: string; name: string }> {
    return (this.current?.regs ?? []).map((r) => ({ kind: r.kind, name: r.kind === 'tool' ? r.name : r.kind === 'stage' ? r.stage : r.event }));
  }

  private load(): Loaded {
    const log = createLogger(`plugin:${this.name}`);
    let source: string;
    try {
      source = readFileSync(this.file, 'utf8');
    } catch (err) {
      throw new HomeAgentError('LUA_PLUGIN', `plugin ${this.name}: cannot read ${this.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    const chunk = `plugins/${this.name}/${path.basename(this.file)}`;
    const network = (this.opts.approved ?? []).includes('network') || this.sdk?.allowed('network') === true;
    const vm = new LuaVM({
      name: chunk,
      log,
      instructionBudget: this.opts.instructionBudget ?? 2_000_000,
      timeBudgetMs: this.opts.timeBudgetMs ?? 50,
      ...(network ? { allowHost: () => true } : {}),
      hostFunctions: {
        plugin_name: () => this.name,
        publish: (event, payload) => {
          if (!this.sdk) throw new Error('not running');
          this.sdk.publish(String(event) as EventType, payload as never);
        },
        setting: (key) => {
          if (!this.sdk) throw new Error('not running');
          const v = this.sdk.settings().get(`plugin.${this.name}.${String(key)}`);
          return v === null ? undefined : v;
        },
      },
    });
    try {
      vm.load(WRAPPER);
      const regs = vm.callSync('__load', [source, `@${chunk}`]);
      return { vm, regs: checkRegistrations(this.name, regs) };
    } catch (err) {
      vm.close();
      throw err;
    }
  }

  private apply(sdk: ExternalSDK, vm: LuaVM, r: LuaRegistration): void {
    if (r.kind === 'tool') {
      sdk.registerTool({
        name: r.name,
        description: r.description,
        parameters: fixSchema(r.parameters ?? { type: 'object', properties: {} }) as JsonSchema,
        group: this.name,
        handler: async (args) => {
          const out = await vm.call('__call', [r.id, plain(args)]);
          return typeof out === 'string' ? out : JSON.stringify(out ?? null);
        },
      });
    } else if (r.kind === 'stage') {
      sdk.registerStage(r.stage as StageName, async (ctx) => {
        const changes = await vm.call('__call', [r.id, stageView(ctx)]);
        applyStageChanges(ctx, changes);
      });
    } else {
      const unsub = sdk.subscribe(r.event as EventType, async (payload) => {
        await vm.call('__call', [r.id, plain(payload)]);
      });
      this.unsubscribers.push(unsub);
    }
  }
}

/** The wrapper's answer as registrations, checked (a Lua table could hold anything). */
function checkRegistrations(plugin: string, raw: unknown): LuaRegistration[] {
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Object.keys(raw).length === 0 ? [] : undefined;
  if (!list) throw new HomeAgentError('LUA_PLUGIN', `plugin ${plugin}: registrations are not a list`);
  return list.map((x: unknown) => {
    const r = x as Record<string, unknown>;
    if (r.kind === 'tool' && typeof r.name === 'string') return { kind: 'tool', id: Number(r.id), name: r.name, description: String(r.description ?? ''), parameters: r.parameters };
    if (r.kind === 'stage' && typeof r.stage === 'string') return { kind: 'stage', id: Number(r.id), stage: r.stage };
    if (r.kind === 'subscription' && typeof r.event === 'string') return { kind: 'subscription', id: Number(r.id), event: r.event };
    throw new HomeAgentError('LUA_PLUGIN', `plugin ${plugin}: a registration of an unknown shape: ${JSON.stringify(r).slice(0, 200)}`);
  });
}

/** A Lua table's empty `properties` comes back as [] (Lua has one table type); JSON Schema wants {}. */
function fixSchema(s: unknown): unknown {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
  const o: Record<string, unknown> = { ...(s as Record<string, unknown>) };
  if (Array.isArray(o.properties) && o.properties.length === 0) o.properties = {};
  if (o.properties && typeof o.properties === 'object') {
    o.properties = Object.fromEntries(Object.entries(o.properties as Record<string, unknown>).map(([k, v]) => [k, fixSchema(v)]));
  }
  if (o.items) o.items = fixSchema(o.items);
  return o;
}

/** A JSON copy (no functions, class instances or undefined reach the VM). */
function plain(v: unknown): unknown {
  try {
    return v === undefined ? null : (JSON.parse(JSON.stringify(v)) as unknown);
  } catch {
    return null;
  }
}

/** What a Lua stage handler reads of the context. */
function stageView(ctx: StageContext): unknown {
  return plain({
    stage: ctx.stage,
    input: { text: ctx.input.text, channel: ctx.input.channel, ...(ctx.input.user ? { user: ctx.input.user } : {}) },
    raw_message: ctx.raw_message,
    ...(ctx.tool_call ? { tool_call: { name: ctx.tool_call.function.name, arguments: ctx.tool_call.function.arguments } } : {}),
    ...(ctx.tool_result ? { tool_result: { name: ctx.tool_result.name, content: ctx.tool_result.content, is_error: ctx.tool_result.is_error } } : {}),
    final_text: ctx.final_text,
    llm_text: ctx.llm_text,
  });
}

/** Apply a Lua stage handler's changes; writes the stage does not allow throw StageAccessError (the context is the host's guarded view). */
function applyStageChanges(ctx: StageContext, changes: unknown): void {
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return;
  const c = changes as Record<string, unknown>;
  if (typeof c.raw_message === 'string') ctx.raw_message = c.raw_message;
  if (c.deny === true) ctx.deny = true;
  if (typeof c.deny_reason === 'string') ctx.deny_reason = c.deny_reason;
  if (typeof c.response === 'string') ctx.response = c.response;
  if (typeof c.final_text === 'string') ctx.final_text = c.final_text;
  if (c.skip_output === true) ctx.skip_output = true;
  if (typeof c.tool_result_content === 'string' && ctx.tool_result) ctx.tool_result = { ...ctx.tool_result, content: c.tool_result_content };
}
