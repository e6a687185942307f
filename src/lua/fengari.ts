/**
 * Typed access to the parts of fengari (Lua 5.3 in JavaScript) the VM uses.
 * fengari ships no type declarations; this module loads it once and exposes
 * the C-API-shaped functions with narrow signatures. Lua strings are
 * `Uint8Array` byte strings; integers are 32-bit (fengari's LUA_INT_LONG).
 */
import { createRequire } from 'node:module';

/** An opaque lua_State (a Lua thread). */
export interface LuaState {
  readonly __brand_lua_state?: never;
}

/** A JS function callable from Lua: reads its arguments from the stack, returns the number of results. */
export type LuaJsFunction = (L: LuaState) => number;

/** The debug record passed to hooks (only `event` is read). */
export interface LuaDebug {
  event: number;
}

/** lua.h, as fengari exports it (subset). */
export interface LuaApi {
  LUA_OK: number;
  LUA_YIELD: number;
  LUA_ERRRUN: number;
  LUA_ERRSYNTAX: number;
  LUA_ERRMEM: number;
  LUA_ERRERR: number;
  LUA_MULTRET: number;
  LUA_REGISTRYINDEX: number;
  LUA_MASKCOUNT: number;
  LUA_TNIL: number;
  LUA_TBOOLEAN: number;
  LUA_TLIGHTUSERDATA: number;
  LUA_TNUMBER: number;
  LUA_TSTRING: number;
  LUA_TTABLE: number;
  LUA_TFUNCTION: number;
  LUA_TUSERDATA: number;
  LUA_TTHREAD: number;
  lua_absindex(L: LuaState, idx: number): number;
  lua_checkstack(L: LuaState, n: number): boolean;
  lua_createtable(L: LuaState, narr: number, nrec: number): void;
  lua_getfield(L: LuaState, idx: number, k: Uint8Array | string): number;
  lua_getglobal(L: LuaState, name: Uint8Array | string): number;
  lua_getmetatable(L: LuaState, idx: number): boolean;
  lua_gettop(L: LuaState): number;
  lua_isinteger(L: LuaState, idx: number): boolean;
  lua_newthread(L: LuaState): LuaState;
  lua_next(L: LuaState, idx: number): boolean;
  lua_pushboolean(L: LuaState, b: boolean): void;
  lua_pushinteger(L: LuaState, n: number): void;
  lua_pushjsfunction(L: LuaState, f: LuaJsFunction): void;
  lua_pushlightuserdata(L: LuaState, p: object): void;
  lua_pushnil(L: LuaState): void;
  lua_pushnumber(L: LuaState, n: number): void;
  lua_pushstring(L: LuaState, s: Uint8Array | string): Uint8Array;
  lua_pushvalue(L: LuaState, idx: number): void;
  lua_rawequal(L: LuaState, a: number, b: number): boolean;
  lua_rawget(L: LuaState, idx: number): number;
  lua_rawgeti(L: LuaState, idx: number, n: number): number;
  lua_rawlen(L: LuaState, idx: number): number;
  lua_rawset(L: LuaState, idx: number): void;
  lua_rawseti(L: LuaState, idx: number, n: number): void;
  lua_resume(L: LuaState, from: LuaState | null, nargs: number): number;
  lua_setfield(L: LuaState, idx: number, k: Uint8Array | string): void;
  lua_setglobal(L: LuaState, name: Uint8Array | string): void;
  lua_sethook(L: LuaState, f: ((L: LuaState, ar: LuaDebug) => void) | null, mask: number, count: number): void;
  lua_setmetatable(L: LuaState, idx: number): void;
  lua_settop(L: LuaState, idx: number): void;
  lua_status(L: LuaState): number;
  lua_toboolean(L: LuaState, idx: number): boolean;
  lua_tointeger(L: LuaState, idx: number): number;
  lua_tonumber(L: LuaState, idx: number): number;
  lua_tostring(L: LuaState, idx: number): Uint8Array | null;
  lua_touserdata(L: LuaState, idx: number): unknown;
  lua_type(L: LuaState, idx: number): number;
  lua_xmove(from: LuaState, to: LuaState, n: number): void;
  lua_yield(L: LuaState, n: number): number;
  lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
  lua_call(L: LuaState, nargs: number, nresults: number): void;
  lua_error(L: LuaState): number;
  lua_pop(L: LuaState, n: number): void;
  lua_remove(L: LuaState, idx: number): void;
  lua_insert(L: LuaState, idx: number): void;
}

/** lauxlib.h (subset). */
export interface LauxApi {
  luaL_newstate(): LuaState;
  luaL_loadbufferx(L: LuaState, buf: Uint8Array, size: number | null, name: Uint8Array | string, mode: Uint8Array | string | null): number;
  luaL_error(L: LuaState, fmt: Uint8Array | string, ...args: unknown[]): number;
  luaL_traceback(L: LuaState, L1: LuaState, msg: Uint8Array | string | null, level: number): void;
  luaL_ref(L: LuaState, t: number): number;
  luaL_unref(L: LuaState, t: number, ref: number): void;
  luaL_requiref(L: LuaState, modname: Uint8Array | string, openf: LuaJsFunction, glb: number): void;
  luaL_tolstring(L: LuaState, idx: number): Uint8Array;
  luaL_checklstring(L: LuaState, arg: number): Uint8Array;
  luaL_optlstring(L: LuaState, arg: number, def: Uint8Array | null): Uint8Array | null;
  luaL_checkinteger(L: LuaState, arg: number): number;
  luaL_checkany(L: LuaState, arg: number): void;
  luaL_argerror(L: LuaState, arg: number, extramsg: Uint8Array | string): number;
}

/** lualib.h (subset). */
export interface LuaLibApi {
  luaopen_base: LuaJsFunction;
  luaopen_coroutine: LuaJsFunction;
  luaopen_table: LuaJsFunction;
  luaopen_os: LuaJsFunction;
  luaopen_string: LuaJsFunction;
  luaopen_utf8: LuaJsFunction;
  luaopen_math: LuaJsFunction;
}

interface FengariModule {
  lua: LuaApi;
  lauxlib: LauxApi;
  lualib: LuaLibApi;
}

const require = createRequire(import.meta.url);
const fengari = require('fengari') as FengariModule;

export const lua: LuaApi = fengari.lua;
export const lauxlib: LauxApi = fengari.lauxlib;
export const lualib: LuaLibApi = fengari.lualib;
