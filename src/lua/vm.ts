/**
 * The sandboxed Lua VM (fengari, Lua 5.3) that runs protocol adapters and Lua
 * plugins (seed 000 section 9 "Lua VM 能力", issue 3).
 *
 * Owns: loading a script (text only), calling its functions with an
 * instruction and time budget per call, and turning every Lua failure into an
 * `AdapterError` naming script and line. The sandbox and the host functions
 * (json, log, http_get, http_post) are in host.ts; value conversion in
 * convert.ts / fast-convert.ts.
 *
 * Every call runs in a Lua coroutine. `http_get` / `http_post` yield to the
 * host, which performs the request with `fetch` and resumes the coroutine, so
 * a script waiting on the network never blocks the event loop. Threads are
 * pooled and reused after a clean return; one VM serves any number of
 * concurrent calls.
 */
import { performance } from 'node:perf_hooks';
import { lua, lauxlib, type LuaState } from './fengari.js';
import { AdapterError } from './errors.js';
import {
  createArrayMarker,
  decodeUtf8,
  encodeJson,
  encodeUtf8,
  pushJs,
  toJs,
  type ConvertContext,
} from './convert.js';
import { doHttp, openSandbox, registerHostFunctions, type ActiveCall } from './host.js';
import { createFastContext, fastPushJs, fastToJs, type FastContext } from './fast-convert.js';
import type { Logger } from '../kernel/log-types.js';

/** Options of a LuaVM. */
export interface LuaVMOptions {
  /** Script name used in error messages and as the chunk name, e.g. `adapters/ollama.lua`. */
  name: string;
  /** Receives `log(level, msg)` and `print(...)` from the script. */
  log?: Logger;
  /** Whether `http_get`/`http_post` may reach `host` (hostname, or hostname:port). Default: nothing allowed. */
  allowHost?: (host: string, url: URL) => boolean;
  /** Timeout of one `http_*` request, ms (default 10000). */
  httpTimeoutMs?: number;
  /** Maximum response body of one `http_*` request, bytes (default 4 MiB). */
  httpMaxBytes?: number;
  /** Lua VM instructions one call may execute (default 2,000,000). */
  instructionBudget?: number;
  /** Running time one call may use, ms, excluding time spent waiting on http (default 50); applies once the call ran 20k instructions (a 32 KB request needs under 10k). */
  timeBudgetMs?: number;
  /** Sources `adapter_base(name)` may load (see HostBridge.resolveModule). */
  resolveModule?: (name: string) => { chunkName: string; source: Uint8Array } | undefined;
  /** Injectable fetch (tests). */
  fetch?: typeof fetch;
  /**
   * Functions of the host the script may call synchronously, as the global
   * table `host` (`host.<name>(...)`; Lua plugins' sdk table is built on
   * them). Arguments arrive converted to JS values; the return value goes
   * back converted (undefined: nothing); a thrown error becomes a Lua error
   * with its message (a script may pcall it; a budget stop it cannot).
   */
  hostFunctions?: Record<string, (...args: unknown[]) => unknown>;
}

/** Options of one call. */
export interface LuaCallOptions {
  /** Aborts a pending `http_*` request of this call. */
  signal?: AbortSignal;
  /** 'js' (default): the first result converted to a JS value. 'json': the first result as JSON text (strings returned as-is). */
  result?: 'js' | 'json';
}

const HOOK_EVERY = 1000;
/** Instructions a call must have run before its time budget applies. */
const TIME_CHECK_MIN_INSTRUCTIONS = 20_000;
const BUDGET_MESSAGE = 'instruction budget exceeded';

interface CallState extends ActiveCall {
  used: number;
  elapsedMs: number;
  segmentStart: number;
  exceeded: boolean;
}

/**
 * One sandboxed Lua state holding one loaded script.
 * Create, `load(source)`, then `call`/`callSync` functions of the table the
 * script returned (or of its global `adapter` when it returned nothing).
 */
export class LuaVM {
  readonly name: string;
  private readonly L: LuaState;
  private readonly ctx: ConvertContext;
  /** Direct table building/reading (fast-convert.ts); null when fengari internals differ. */
  private readonly fast: FastContext | null;
  private readonly opts: LuaVMOptions;
  private readonly budget: number;
  private readonly timeBudgetMs: number;
  private moduleRef = -1;
  /** Registry references of module functions, looked up once per load. */
  private fnRefs = new Map<string, number>();
  private active: CallState | null = null;
  private readonly idle: Array<{ thread: LuaState; ref: number }> = [];
  private readonly threadRefs = new Map<LuaState, number>();
  private closed = false;

  constructor(opts: LuaVMOptions) {
    this.opts = opts;
    this.name = opts.name;
    this.budget = opts.instructionBudget ?? 2_000_000;
    this.timeBudgetMs = opts.timeBudgetMs ?? 50;
    this.L = lauxlib.luaL_newstate();
    this.ctx = { arrayMtRef: createArrayMarker(this.L), keyRefs: new Map() };
    this.fast = process.env.HOMEAGENT_LUA_SLOW_CONVERT ? null : createFastContext(this.L, this.ctx.arrayMtRef);
    openSandbox(this.L, () => this.active?.exceeded ?? false);
    registerHostFunctions(this.L, {
      name: this.name,
      log: opts.log,
      allowHost: opts.allowHost,
      ctx: this.ctx,
      active: () => this.active,
      push: (l, v) => this.push(l, v),
      encode: (l, idx) => this.encode(l, idx),
      ...(opts.resolveModule ? { resolveModule: opts.resolveModule } : {}),
    });
    if (opts.hostFunctions) this.registerHostTable(opts.hostFunctions);
  }

  /** The global table `host` of LuaVMOptions.hostFunctions. */
  private registerHostTable(fns: Record<string, (...args: unknown[]) => unknown>): void {
    const L = this.L;
    lua.lua_createtable(L, 0, Object.keys(fns).length);
    for (const [fname, fn] of Object.entries(fns)) {
      lua.lua_pushjsfunction(L, (l) => {
        const n = lua.lua_gettop(l);
        let result: unknown;
        try {
          const args: unknown[] = [];
          for (let i = 1; i <= n; i++) args.push(lua.lua_type(l, i) === lua.LUA_TFUNCTION ? undefined : this.read(l, i));
          result = fn(...args);
        } catch (err) {
          return lauxlib.luaL_error(l, encodeUtf8(`host.${fname}: ${(err as Error).message ?? String(err)}`.replace(/%/g, '%%')));
        }
        if (result === undefined) return 0;
        this.push(l, result);
        return 1;
      });
      lua.lua_setfield(L, -2, fname);
    }
    lua.lua_setglobal(L, 'host');
  }

  /**
   * Compiles and runs `source` (text only; bytecode is refused) and keeps the
   * table it returns as the module.
   * @throws AdapterError ADAPTER_SYNTAX on a syntax error, ADAPTER_RUNTIME /
   *   ADAPTER_BUDGET when the main chunk fails, ADAPTER_RESULT when it returns no table.
   */
  load(source: string | Uint8Array): void {
    const L = this.L;
    const bytes = typeof source === 'string' ? encodeUtf8(source) : source;
    const status = lauxlib.luaL_loadbufferx(L, bytes, null, `@${this.name}`, 't');
    if (status !== lua.LUA_OK) {
      const msg = this.popMessage(L);
      throw new AdapterError('ADAPTER_SYNTAX', { script: this.name, line: lineOf(msg, this.name), detail: stripWhere(msg, this.name) });
    }
    const fnRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    try {
      const mod = this.runSync('(main chunk)', (co) => {
        lua.lua_rawgeti(co, lua.LUA_REGISTRYINDEX, fnRef);
        return 0;
      }, 'ref');
      if (typeof mod === 'number') {
        if (this.moduleRef >= 0) lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, this.moduleRef);
        for (const r of this.fnRefs.values()) lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, r);
        this.fnRefs = new Map();
        this.moduleRef = mod;
      }
    } finally {
      lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, fnRef);
    }
  }

  /** Whether the module has a function named `fn`. */
  hasFunction(fn: string): boolean {
    if (this.moduleRef < 0) return false;
    const L = this.L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.moduleRef);
    const t = lua.lua_getfield(L, -1, fn);
    lua.lua_pop(L, 2);
    return t === lua.LUA_TFUNCTION;
  }

  /** A field of the module as a JS value (undefined when absent). */
  field(name: string): unknown {
    if (this.moduleRef < 0) return undefined;
    const L = this.L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.moduleRef);
    lua.lua_getfield(L, -1, name);
    try {
      return toJs(L, this.ctx, -1);
    } finally {
      lua.lua_pop(L, 2);
    }
  }

  /**
   * Calls module function `fn` with `args` synchronously. `http_*` are not
   * available (they need `call`). Arguments: strings and Uint8Array become Lua
   * strings, objects tables, null json.null.
   * @throws AdapterError on any Lua failure or budget overrun.
   */
  callSync(fn: string, args: readonly unknown[], opts: LuaCallOptions = {}): unknown {
    return this.runSync(fn, (co) => this.pushCall(co, fn, args), opts.result ?? 'js');
  }

  /**
   * Calls module function `fn` with `args` in a coroutine; `http_get` /
   * `http_post` inside suspend it while the host does the request.
   * @throws AdapterError on any Lua failure or budget overrun; the abort
   *   reason when `signal` aborts during a pending http request.
   */
  async call(fn: string, args: readonly unknown[], opts: LuaCallOptions = {}): Promise<unknown> {
    this.assertOpen();
    const { thread: co, ref } = this.takeThread();
    const state = this.newState(fn, co, true);
    let nargs: number;
    try {
      nargs = this.pushCall(co, fn, args);
    } catch (err) {
      this.dropThread(co, ref);
      throw err;
    }
    for (;;) {
      const status = this.resume(co, nargs, state);
      if (status === lua.LUA_OK) return this.finish(co, ref, state, opts.result ?? 'js');
      if (status !== lua.LUA_YIELD) throw this.failure(co, ref, status, state);
      const req = state.http;
      state.http = null;
      if (!req) {
        this.dropThread(co, ref);
        throw new AdapterError('ADAPTER_RUNTIME', { script: this.name, fn, detail: 'the script yielded outside a coroutine of its own' });
      }
      let result: [string | null, number | string];
      try {
        result = await doHttp(req, this.opts, opts.signal);
      } catch (err) {
        this.dropThread(co, ref);
        throw err;
      }
      if (this.closed) throw new AdapterError('ADAPTER_RUNTIME', { script: this.name, fn, detail: 'VM closed during http request' });
      lua.lua_settop(co, 0);
      if (result[0] === null) lua.lua_pushnil(co);
      else lua.lua_pushstring(co, encodeUtf8(result[0]));
      if (typeof result[1] === 'number') lua.lua_pushinteger(co, result[1]);
      else lua.lua_pushstring(co, encodeUtf8(result[1]));
      nargs = 2;
    }
  }

  /** Releases the state; later calls throw. */
  close(): void {
    this.closed = true;
    this.idle.length = 0;
    this.threadRefs.clear();
  }

  // ---- internals -------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new AdapterError('ADAPTER_RUNTIME', { script: this.name, detail: 'VM is closed' });
  }

  private newState(fn: string, thread: LuaState, allowYield: boolean): CallState {
    return { fn, used: 0, elapsedMs: 0, segmentStart: 0, exceeded: false, allowYield, thread, http: null };
  }

  private runSync(fn: string, push: (co: LuaState) => number, result: 'js' | 'json' | 'ref'): unknown {
    this.assertOpen();
    const { thread: co, ref } = this.takeThread();
    const state = this.newState(fn, co, false);
    let nargs: number;
    try {
      nargs = push(co);
    } catch (err) {
      this.dropThread(co, ref);
      throw err;
    }
    const status = this.resume(co, nargs, state);
    if (status === lua.LUA_OK) return this.finish(co, ref, state, result);
    if (status === lua.LUA_YIELD) {
      this.dropThread(co, ref);
      throw new AdapterError('ADAPTER_RUNTIME', {
        script: this.name,
        fn,
        detail: `${fn} may not wait (http_get/http_post or yield are only allowed where the host calls asynchronously)`,
      });
    }
    throw this.failure(co, ref, status, state);
  }

  private pushCall(co: LuaState, fn: string, args: readonly unknown[]): number {
    if (this.moduleRef < 0) throw new AdapterError('ADAPTER_MISSING', { script: this.name, fn, detail: 'no script loaded' });
    const ref = this.fnRefs.get(fn);
    if (ref !== undefined) lua.lua_rawgeti(co, lua.LUA_REGISTRYINDEX, ref);
    else {
      lua.lua_rawgeti(co, lua.LUA_REGISTRYINDEX, this.moduleRef);
      const t = lua.lua_getfield(co, -1, fn);
      lua.lua_remove(co, -2);
      if (t !== lua.LUA_TFUNCTION) {
        lua.lua_settop(co, 0);
        throw new AdapterError('ADAPTER_MISSING', { script: this.name, fn, detail: `function ${fn} is not defined` });
      }
      // Module functions are fixed after load (a script replacing its own
      // functions at run time keeps the first one: reload the file instead).
      lua.lua_pushvalue(co, -1);
      this.fnRefs.set(fn, lauxlib.luaL_ref(co, lua.LUA_REGISTRYINDEX));
    }
    try {
      for (const a of args) this.push(co, a);
    } catch (err) {
      lua.lua_settop(co, 0);
      throw new AdapterError('ADAPTER_RESULT', { script: this.name, fn, detail: `argument not convertible: ${(err as Error).message}` });
    }
    return args.length;
  }

  private resume(co: LuaState, nargs: number, state: CallState): number {
    const prev = this.active;
    this.active = state;
    state.segmentStart = performance.now();
    try {
      return lua.lua_resume(co, this.L, nargs);
    } finally {
      state.elapsedMs += performance.now() - state.segmentStart;
      this.active = prev;
    }
  }

  private finish(co: LuaState, ref: number, state: CallState, result: 'js' | 'json' | 'ref'): unknown {
    try {
      if (result === 'ref') {
        if (lua.lua_gettop(co) < 1 || lua.lua_type(co, 1) !== lua.LUA_TTABLE) {
          lua.lua_settop(co, 0);
          lua.lua_getglobal(co, 'adapter');
          if (lua.lua_type(co, -1) !== lua.LUA_TTABLE) {
            throw new AdapterError('ADAPTER_RESULT', { script: this.name, detail: 'the script must return a table (or define a global `adapter` table)' });
          }
        } else lua.lua_settop(co, 1);
        lua.lua_xmove(co, this.L, 1);
        return lauxlib.luaL_ref(this.L, lua.LUA_REGISTRYINDEX);
      }
      if (lua.lua_gettop(co) < 1) return undefined;
      if (result === 'json') {
        if (lua.lua_type(co, 1) === lua.LUA_TSTRING) return decodeUtf8(lua.lua_tostring(co, 1) ?? new Uint8Array(0));
        return this.encode(co, 1);
      }
      return this.read(co, 1);
    } catch (err) {
      if (err instanceof AdapterError) throw err;
      throw new AdapterError('ADAPTER_RESULT', { script: this.name, fn: state.fn, detail: `result not convertible: ${(err as Error).message}` });
    } finally {
      lua.lua_settop(co, 0);
      this.idle.push({ thread: co, ref });
    }
  }

  private failure(co: LuaState, ref: number, status: number, state: CallState): AdapterError {
    const msg = lua.lua_type(co, -1) === lua.LUA_TSTRING ? decodeUtf8(lua.lua_tostring(co, -1) ?? new Uint8Array(0)) : describeValue(co, this.ctx);
    lauxlib.luaL_traceback(this.L, co, null, 0);
    const traceback = decodeUtf8(lua.lua_tostring(this.L, -1) ?? new Uint8Array(0));
    lua.lua_pop(this.L, 1);
    this.dropThread(co, ref);
    let line = lineOf(msg, this.name);
    if (line === undefined) line = lineOf(traceback, this.name, true);
    if (state.exceeded) {
      return new AdapterError('ADAPTER_BUDGET', {
        script: this.name,
        fn: state.fn,
        line,
        detail: `${BUDGET_MESSAGE} (${state.used} instructions, ${state.elapsedMs.toFixed(1)} ms; limits ${this.budget} instructions, ${this.timeBudgetMs} ms)`,
        traceback,
      });
    }
    const detail = status === lua.LUA_ERRMEM ? 'out of memory' : stripWhere(msg, this.name);
    return new AdapterError('ADAPTER_RUNTIME', { script: this.name, fn: state.fn, line, detail, traceback });
  }

  private takeThread(): { thread: LuaState; ref: number } {
    const t = this.idle.pop();
    if (t) return t;
    const thread = lua.lua_newthread(this.L);
    const ref = lauxlib.luaL_ref(this.L, lua.LUA_REGISTRYINDEX);
    lua.lua_sethook(thread, this.hook, lua.LUA_MASKCOUNT, HOOK_EVERY);
    this.threadRefs.set(thread, ref);
    return { thread, ref };
  }

  private dropThread(co: LuaState, ref: number): void {
    this.threadRefs.delete(co);
    if (!this.closed) lauxlib.luaL_unref(this.L, lua.LUA_REGISTRYINDEX, ref);
  }

  private readonly hook = (L: LuaState): void => {
    const s = this.active;
    if (!s) return;
    s.used += HOOK_EVERY;
    // The time limit only counts for a call that is really busy: a GC pause or
    // a loaded machine must not kill a transform that ran a few thousand
    // instructions.
    if (
      s.exceeded ||
      s.used > this.budget ||
      (s.used >= TIME_CHECK_MIN_INSTRUCTIONS && s.elapsedMs + (performance.now() - s.segmentStart) > this.timeBudgetMs)
    ) {
      s.exceeded = true;
      lauxlib.luaL_error(L, BUDGET_MESSAGE);
    }
  };

  private popMessage(L: LuaState): string {
    const b = lua.lua_tostring(L, -1);
    lua.lua_pop(L, 1);
    return b ? decodeUtf8(b) : '(non-string error)';
  }

  /** Pushes a JS value (fast path when available). */
  private push(L: LuaState, v: unknown): void {
    if (this.fast) fastPushJs(L, this.fast, v);
    else pushJs(L, this.ctx, v);
  }

  /** Reads the value at `idx` as a JS value (fast path when available). */
  private read(L: LuaState, idx: number): unknown {
    return this.fast ? fastToJs(L, this.fast, idx) : toJs(L, this.ctx, idx);
  }

  /** JSON text of the value at `idx`. */
  private encode(L: LuaState, idx: number): string {
    if (!this.fast) return encodeJson(L, this.ctx, idx);
    const v = fastToJs(L, this.fast, idx);
    return JSON.stringify(v === undefined ? null : v);
  }

}

function describeValue(L: LuaState, ctx: ConvertContext): string {
  try {
    const v = toJs(L, ctx, -1);
    return v === undefined ? '(error object is not a string)' : JSON.stringify(v);
  } catch {
    return '(error object is not a string)';
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The line number in "script:LINE: msg" (first match; `any` = search anywhere in a traceback). */
function lineOf(msg: string, script: string, any = false): number | undefined {
  const re = new RegExp(`${any ? '' : '^'}${escapeRe(script)}:(\\d+):`);
  const m = re.exec(msg);
  return m ? Number(m[1]) : undefined;
}

function stripWhere(msg: string, script: string): string {
  return msg.replace(new RegExp(`^${escapeRe(script)}:\\d+: `), '');
}
