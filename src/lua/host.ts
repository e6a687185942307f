/**
 * What a script sees of the host: the sandboxed standard library (base,
 * string, table, math, utf8, coroutine, and os.time/clock/date/difftime only;
 * no io, os.execute, loadfile, dofile, require, string.dump or bytecode
 * `load`; pcall/xpcall/coroutine.resume cannot swallow a budget stop), and
 * the host functions of seed 000 section 9: json.encode/json.decode/json.null/
 * json.array, log(level, msg), print (logged at debug: a script may print what was said), http_get(url[, headers]) and
 * http_post(url, body[, headers]) -> body, status | nil, error.
 */
import { lua, lauxlib, lualib, type LuaState, type LuaJsFunction } from './fengari.js';
import { ConvertError, JSON_NULL, decodeUtf8, encodeUtf8, toJs, type ConvertContext } from './convert.js';
import type { Logger } from '../kernel/log-types.js';

const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);

/** An http_get/http_post a script is waiting for. */
export interface PendingHttp {
  method: 'GET' | 'POST';
  url: string;
  body?: string;
  headers: Record<string, string>;
}

/** The state of the call running now, as the host functions need it. */
export interface ActiveCall {
  fn: string;
  /** Whether the call may wait (asynchronous call). */
  allowYield: boolean;
  /** The coroutine the call runs in (http_* may only yield from it). */
  thread: LuaState;
  /** Set by http_* before yielding. */
  http: PendingHttp | null;
}

/** What the host functions need from their VM. */
export interface HostBridge {
  name: string;
  log?: Logger;
  allowHost?: (host: string, url: URL) => boolean;
  ctx: ConvertContext;
  active(): ActiveCall | null;
  push(L: LuaState, v: unknown): void;
  encode(L: LuaState, idx: number): string;
  /**
   * Source of another script `adapter_base(name)` may build on (e.g. deepseek
   * on openai), or undefined when there is none. The host decides what a name
   * may resolve to (only files of the adapters directory).
   */
  resolveModule?(name: string): { chunkName: string; source: Uint8Array } | undefined;
}

/** Options of the http host functions. */
export interface HttpOptions {
  fetch?: typeof fetch;
  httpTimeoutMs?: number;
  httpMaxBytes?: number;
}

function popMessage(L: LuaState): string {
  const b = lua.lua_tostring(L, -1);
  lua.lua_pop(L, 1);
  return b ? decodeUtf8(b) : '(non-string error)';
}

const PRELUDE = `
local budget_hit = ...
local raw_pcall, raw_xpcall, raw_load, raw_rep, co_resume = pcall, xpcall, load, string.rep, coroutine.resume
local function check(ok, ...)
  if not ok and budget_hit() then error((...), 0) end
  return ok, ...
end
pcall = function(f, ...) return check(raw_pcall(f, ...)) end
xpcall = function(f, h, ...) return check(raw_xpcall(f, h, ...)) end
coroutine.resume = function(c, ...) return check(co_resume(c, ...)) end
load = function(chunk, name, mode, env)
  if type(chunk) ~= "string" then return nil, "load: only source text is allowed in the sandbox" end
  if env == nil then return raw_load(chunk, name, "t") end
  return raw_load(chunk, name, "t", env)
end
string.rep = function(s, n, sep)
  if type(s) == "string" and type(n) == "number" and (#s + #(sep or "")) * n > 16777216 then
    error("string.rep: result larger than 16 MiB", 2)
  end
  return raw_rep(s, n, sep)
end
string.dump = nil
dofile, loadfile, require, collectgarbage, module = nil, nil, nil, nil, nil
`;

/** Opens the sandboxed libraries and runs the prelude; `budgetHit` tells whether the running call is out of budget. */
export function openSandbox(L: LuaState, budgetHit: () => boolean): void {
  const libs: Array<[string, LuaJsFunction]> = [
    ['_G', lualib.luaopen_base],
    ['coroutine', lualib.luaopen_coroutine],
    ['table', lualib.luaopen_table],
    ['string', lualib.luaopen_string],
    ['utf8', lualib.luaopen_utf8],
    ['math', lualib.luaopen_math],
  ];
  for (const [name, open] of libs) {
    lauxlib.luaL_requiref(L, name, open, 1);
    lua.lua_pop(L, 1);
  }
  // os: only the clock and date functions.
  lauxlib.luaL_requiref(L, 'os', lualib.luaopen_os, 0);
  lua.lua_createtable(L, 0, 4);
  for (const f of ['time', 'clock', 'date', 'difftime']) {
    lua.lua_getfield(L, -2, f);
    lua.lua_setfield(L, -2, f);
  }
  lua.lua_setglobal(L, 'os');
  lua.lua_pop(L, 1);

  const status = lauxlib.luaL_loadbufferx(L, encodeUtf8(PRELUDE), null, '=sandbox', 't');
  if (status !== lua.LUA_OK) throw new Error(`sandbox prelude: ${popMessage(L)}`);
  lua.lua_pushjsfunction(L, (l) => {
    lua.lua_pushboolean(l, budgetHit());
    return 1;
  });
  if (lua.lua_pcall(L, 1, 0, 0) !== lua.LUA_OK) throw new Error(`sandbox prelude: ${popMessage(L)}`);
}

/** Registers json, log, print, http_get and http_post. */
export function registerHostFunctions(L: LuaState, bridge: HostBridge): void {
  const ctx = bridge.ctx;
  const fail = (l: LuaState, msg: string): number => lauxlib.luaL_error(l, encodeUtf8(msg.replace(/%/g, '%%')));

  // json
  lua.lua_createtable(L, 0, 6);
  lua.lua_pushjsfunction(L, (l) => {
    lauxlib.luaL_checkany(l, 1);
    let text: string;
    try {
      text = bridge.encode(l, 1);
    } catch (err) {
      return fail(l, `json.encode: ${(err as Error).message}`);
    }
    lua.lua_pushstring(l, encodeUtf8(text));
    return 1;
  });
  lua.lua_setfield(L, -2, 'encode');
  lua.lua_pushjsfunction(L, (l) => {
    const s = lauxlib.luaL_checklstring(l, 1);
    try {
      bridge.push(l, JSON.parse(decodeUtf8(s)) as unknown);
    } catch (err) {
      if (err instanceof ConvertError || err instanceof SyntaxError) return fail(l, `json.decode: ${err.message}`);
      throw err;
    }
    return 1;
  });
  lua.lua_setfield(L, -2, 'decode');
  lua.lua_pushlightuserdata(L, JSON_NULL);
  lua.lua_setfield(L, -2, 'null');
  lua.lua_pushjsfunction(L, (l) => {
    if (lua.lua_type(l, 1) !== lua.LUA_TTABLE) {
      lua.lua_settop(l, 0);
      lua.lua_createtable(l, 0, 0);
    }
    lua.lua_settop(l, 1);
    lua.lua_rawgeti(l, lua.LUA_REGISTRYINDEX, ctx.arrayMtRef);
    lua.lua_setmetatable(l, 1);
    return 1;
  });
  lua.lua_setfield(L, -2, 'array');
  lua.lua_setglobal(L, 'json');

  // log(level, msg) and print(...)
  const log = bridge.log;
  lua.lua_pushjsfunction(L, (l) => {
    const level = decodeUtf8(lauxlib.luaL_checklstring(l, 1));
    const msg = decodeUtf8(lauxlib.luaL_tolstring(l, 2));
    const lvl = LOG_LEVELS.has(level) ? (level as 'debug' | 'info' | 'warn' | 'error') : 'info';
    log?.[lvl]({ script: bridge.name }, msg);
    return 0;
  });
  lua.lua_setglobal(L, 'log');
  lua.lua_pushjsfunction(L, (l) => {
    const n = lua.lua_gettop(l);
    const parts: string[] = [];
    for (let i = 1; i <= n; i++) {
      parts.push(decodeUtf8(lauxlib.luaL_tolstring(l, i)));
      lua.lua_pop(l, 1);
    }
    log?.debug({ script: bridge.name }, parts.join('\t'));
    return 0;
  });
  lua.lua_setglobal(L, 'print');

  // adapter_base(name): run another adapter's main chunk and return its table,
  // so a protocol variant keeps only its differences. Text chunks only; the
  // call budget covers it; a script cannot build on itself.
  const loading = new Set<string>();
  lua.lua_pushjsfunction(L, (l) => {
    const name = decodeUtf8(lauxlib.luaL_checklstring(l, 1));
    const mod = bridge.resolveModule?.(name);
    if (!mod) return fail(l, `adapter_base: no adapter named "${name}"`);
    if (loading.has(mod.chunkName) || mod.chunkName === bridge.name) return fail(l, `adapter_base: "${name}" builds on itself`);
    if (lauxlib.luaL_loadbufferx(l, mod.source, null, encodeUtf8(`@${mod.chunkName}`), encodeUtf8('t')) !== lua.LUA_OK) return lua.lua_error(l);
    loading.add(mod.chunkName);
    try {
      lua.lua_call(l, 0, 1);
    } finally {
      loading.delete(mod.chunkName);
    }
    if (lua.lua_type(l, -1) !== lua.LUA_TTABLE) return fail(l, `adapter_base: ${mod.chunkName} did not return a table`);
    return 1;
  });
  lua.lua_setglobal(L, 'adapter_base');

  // http_get(url[, headers]) / http_post(url, body[, headers]) -> body, status | nil, error
  const httpFn = (method: 'GET' | 'POST'): LuaJsFunction => (l) => {
    const s = bridge.active();
    const url = decodeUtf8(lauxlib.luaL_checklstring(l, 1));
    const body = method === 'POST' ? decodeUtf8(lauxlib.luaL_checklstring(l, 2)) : undefined;
    const hIdx = method === 'POST' ? 3 : 2;
    let headers: Record<string, string> = {};
    if (lua.lua_type(l, hIdx) === lua.LUA_TTABLE) {
      const h = toJs(l, ctx, hIdx);
      if (h && typeof h === 'object' && !Array.isArray(h)) {
        for (const [k, v] of Object.entries(h as Record<string, unknown>)) headers[k] = String(v);
      }
    }
    const fname = method === 'GET' ? 'http_get' : 'http_post';
    if (!s || !s.allowYield) return fail(l, `${fname} is not available in ${s?.fn ?? 'this context'} (synchronous call)`);
    if (l !== s.thread) return fail(l, `${fname} may not be called inside a coroutine of the script`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return fail(l, `${fname}: invalid URL ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return fail(l, `${fname}: only http and https URLs are allowed`);
    const allow = bridge.allowHost;
    if (!allow || !(allow(parsed.hostname, parsed) || allow(parsed.host, parsed))) {
      return fail(l, `${fname}: host ${parsed.host} is not allowed by the settings`);
    }
    s.http = { method, url: parsed.toString(), body, headers };
    headers = {};
    return lua.lua_yield(l, 0);
  };
  lua.lua_pushjsfunction(L, httpFn('GET'));
  lua.lua_setglobal(L, 'http_get');
  lua.lua_pushjsfunction(L, httpFn('POST'));
  lua.lua_setglobal(L, 'http_post');
}

/**
 * Performs one http_get/http_post for a script: resolves [body, status] or
 * [null, error text]; rejects only with the abort reason when `signal` aborts.
 */
export async function doHttp(req: PendingHttp, opts: HttpOptions, signal?: AbortSignal): Promise<[string | null, number | string]> {
  signal?.throwIfAborted();
  const f = opts.fetch ?? fetch;
  const timeout = AbortSignal.timeout(opts.httpTimeoutMs ?? 10_000);
  const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const max = opts.httpMaxBytes ?? 4 * 1024 * 1024;
  try {
    const headers: Record<string, string> = { ...req.headers };
    if (req.method === 'POST' && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    const res = await f(req.url, { method: req.method, body: req.body, headers, signal: sig });
    const buf = new Uint8Array(await res.arrayBuffer());
    if (buf.length > max) return [null, `response larger than ${max} bytes`];
    return [decodeUtf8(buf), res.status];
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    const e = err as Error;
    return [null, e.name === 'TimeoutError' ? 'timeout' : (e.message || String(err))];
  }
}
