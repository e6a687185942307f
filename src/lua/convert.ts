/**
 * Value conversion between JavaScript and a fengari Lua stack, and the JSON
 * codec behind the VM's `json.encode` / `json.decode`.
 *
 * Rules (issue 3 "Chinese text passes through Lua unchanged ... whole numbers
 * stay integers"):
 * - Lua strings are bytes. JS strings enter Lua as their UTF-8 bytes and leave
 *   it decoded from UTF-8, so CJK text round-trips exactly.
 * - JSON numbers that are whole and fit fengari's 32-bit integers become Lua
 *   integers; others become floats. On the way out every whole number, integer
 *   or float, is written without a fraction (256, never 256.0).
 * - JSON `null` is the sentinel `json.null` (so array holes and explicit nulls
 *   survive); decoded arrays carry a marker metatable so an empty array is
 *   encoded back as `[]`, not `{}`. Tables built in Lua are arrays when their
 *   keys are exactly 1..n (n > 0), objects otherwise; `json.array(t)` marks one.
 * - Table key order is preserved (fengari tables iterate in insertion order).
 */
import { lua, lauxlib, type LuaState } from './fengari.js';

/** The JS-side identity of `json.null`. */
export const JSON_NULL: object = Object.freeze({ jsonNull: true });

/** Maximum nesting depth accepted in either direction. */
export const MAX_DEPTH = 200;

/** Per-VM registry references the converters need. */
export interface ConvertContext {
  /** Registry reference of the array-marker metatable. */
  arrayMtRef: number;
  /**
   * Interned object keys: registry references of Lua strings already made,
   * so pushing a known key reuses one Lua string (fengari hashes every new
   * string used as a table key, which is the main cost of building tables).
   */
  keyRefs: Map<string, number>;
}

const KEY_REFS_MAX = 4096;

function pushKey(L: LuaState, ctx: ConvertContext, k: string): void {
  let ref = ctx.keyRefs.get(k);
  if (ref === undefined) {
    lua.lua_pushstring(L, keyBytes(k));
    if (ctx.keyRefs.size >= KEY_REFS_MAX) return;
    lua.lua_pushvalue(L, -1);
    ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    ctx.keyRefs.set(k, ref);
    return;
  }
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
}

/** Decoded keys by the identity of their Lua byte string (constant keys of a script are the same bytes every time). */
const decodedKeys = new WeakMap<Uint8Array, string>();

function keyString(b: Uint8Array): string {
  let s = decodedKeys.get(b);
  if (s === undefined) {
    s = decodeUtf8(b);
    decodedKeys.set(b, s);
  }
  return s;
}

/** Thrown by the converters on cycles or excessive depth; the VM turns it into a Lua error. */
export class ConvertError extends Error {}

const keyCache = new Map<string, Uint8Array>();
const KEY_CACHE_MAX = 4096;

/** UTF-8 bytes of `s` (fast path for short ASCII). */
export function encodeUtf8(s: string): Uint8Array {
  const n = s.length;
  if (n < 48) {
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (s.charCodeAt(i) > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = s.charCodeAt(i);
      return out;
    }
  }
  const b = Buffer.from(s, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Decodes UTF-8 bytes (invalid sequences become U+FFFD, as TextDecoder does). */
export function decodeUtf8(u8: Uint8Array): string {
  const n = u8.length;
  if (n < 48) {
    let s = '';
    for (let i = 0; i < n; i++) {
      const c = u8[i]!;
      if (c > 0x7f) return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('utf8');
      s += String.fromCharCode(c);
    }
    return s;
  }
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('utf8');
}

function keyBytes(k: string): Uint8Array {
  let b = keyCache.get(k);
  if (!b) {
    b = encodeUtf8(k);
    if (keyCache.size < KEY_CACHE_MAX) keyCache.set(k, b);
  }
  return b;
}

/**
 * Pushes one JS value onto the Lua stack: string -> string (UTF-8 bytes),
 * Uint8Array -> string (bytes as-is), number -> integer or float, boolean,
 * null -> json.null, undefined -> nil, array -> marked array table, object -> table.
 * @throws ConvertError beyond MAX_DEPTH.
 */
export function pushJs(L: LuaState, ctx: ConvertContext, v: unknown, depth = 0): void {
  switch (typeof v) {
    case 'string':
      lua.lua_pushstring(L, encodeUtf8(v));
      return;
    case 'number':
      if (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) lua.lua_pushinteger(L, v);
      else lua.lua_pushnumber(L, v);
      return;
    case 'boolean':
      lua.lua_pushboolean(L, v);
      return;
    case 'undefined':
      lua.lua_pushnil(L);
      return;
    case 'object': {
      if (v === null) {
        lua.lua_pushlightuserdata(L, JSON_NULL);
        return;
      }
      if (depth > MAX_DEPTH) throw new ConvertError(`nesting deeper than ${MAX_DEPTH}`);
      if (!lua.lua_checkstack(L, 4)) throw new ConvertError('Lua stack overflow');
      if (v instanceof Uint8Array) {
        lua.lua_pushstring(L, v);
        return;
      }
      if (Array.isArray(v)) {
        lua.lua_createtable(L, v.length, 0);
        for (let i = 0; i < v.length; i++) {
          pushJs(L, ctx, v[i], depth + 1);
          lua.lua_rawseti(L, -2, i + 1);
        }
        lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ctx.arrayMtRef);
        lua.lua_setmetatable(L, -2);
        return;
      }
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj);
      lua.lua_createtable(L, 0, keys.length);
      for (const k of keys) {
        const val = obj[k];
        if (val === undefined) continue;
        pushKey(L, ctx, k);
        pushJs(L, ctx, val, depth + 1);
        lua.lua_rawset(L, -3);
      }
      return;
    }
    default:
      lua.lua_pushnil(L);
  }
}

function isArrayMarked(L: LuaState, idx: number, ctx: ConvertContext): boolean {
  if (!lua.lua_getmetatable(L, idx)) return false;
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ctx.arrayMtRef);
  const same = lua.lua_rawequal(L, -1, -2);
  lua.lua_pop(L, 2);
  return same;
}

/**
 * Reads the Lua value at `idx` as a JS value (the inverse of pushJs).
 * Functions, threads and userdata become undefined (dropped from objects).
 * @throws ConvertError on cycles / excessive depth.
 */
export function toJs(L: LuaState, ctx: ConvertContext, idx: number, depth = 0): unknown {
  switch (lua.lua_type(L, idx)) {
    case lua.LUA_TNIL:
      return undefined;
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, idx);
    case lua.LUA_TNUMBER:
      return lua.lua_isinteger(L, idx) ? lua.lua_tointeger(L, idx) : lua.lua_tonumber(L, idx);
    case lua.LUA_TSTRING: {
      const b = lua.lua_tostring(L, idx);
      return b ? decodeUtf8(b) : '';
    }
    case lua.LUA_TLIGHTUSERDATA:
      return lua.lua_touserdata(L, idx) === JSON_NULL ? null : undefined;
    case lua.LUA_TTABLE:
      return tableToJs(L, ctx, lua.lua_absindex(L, idx), depth);
    default:
      return undefined;
  }
}

function tableToJs(L: LuaState, ctx: ConvertContext, idx: number, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ConvertError(`table nesting deeper than ${MAX_DEPTH} (cycle?)`);
  if (!lua.lua_checkstack(L, 4)) throw new ConvertError('Lua stack overflow');
  if (isArrayMarked(L, idx, ctx)) {
    const n = lua.lua_rawlen(L, idx);
    const out: unknown[] = new Array(n);
    for (let i = 1; i <= n; i++) {
      lua.lua_rawgeti(L, idx, i);
      const v = toJs(L, ctx, -1, depth + 1);
      out[i - 1] = v === undefined ? null : v;
      lua.lua_pop(L, 1);
    }
    return out;
  }
  const keys: Array<string | number> = [];
  const vals: unknown[] = [];
  let allInt = true;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    const kt = lua.lua_type(L, -2);
    let key: string | number;
    if (kt === lua.LUA_TNUMBER) {
      if (lua.lua_isinteger(L, -2)) key = lua.lua_tointeger(L, -2);
      else {
        key = String(lua.lua_tonumber(L, -2));
        allInt = false;
      }
    } else if (kt === lua.LUA_TSTRING) {
      key = keyString(lua.lua_tostring(L, -2) ?? new Uint8Array(0));
      allInt = false;
    } else {
      lua.lua_pop(L, 1);
      continue;
    }
    const v = toJs(L, ctx, -1, depth + 1);
    lua.lua_pop(L, 1);
    if (v === undefined) continue;
    keys.push(key);
    vals.push(v);
  }
  return assembleTable(keys, vals, allInt);
}

/**
 * A Lua table's entries as JSON: an array when every key is an integer and
 * the keys are exactly 1..n (in any order), otherwise an object with the
 * keys as strings. Shared by toJs and fastToJs.
 */
export function assembleTable(keys: Array<string | number>, vals: unknown[], allInt: boolean): unknown[] | Record<string, unknown> {
  const n = keys.length;
  if (allInt && n > 0) {
    const arr: unknown[] = new Array(n);
    let ok = true;
    for (let i = 0; i < n; i++) {
      const k = keys[i] as number;
      if (k < 1 || k > n) {
        ok = false;
        break;
      }
      arr[k - 1] = vals[i];
    }
    if (ok) return arr;
  }
  const obj: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) obj[String(keys[i])] = vals[i];
  return obj;
}

/** Creates the array-marker metatable in `L`'s registry and returns its reference. */
export function createArrayMarker(L: LuaState): number {
  // (the key intern table starts empty; see ConvertContext.keyRefs)
  lua.lua_createtable(L, 0, 1);
  lua.lua_pushstring(L, 'json.array');
  lua.lua_setfield(L, -2, '__name');
  return lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
}

/** JSON text of the Lua value at `idx` (whole numbers without fraction; NaN/Infinity as null). */
export function encodeJson(L: LuaState, ctx: ConvertContext, idx: number): string {
  const v = toJs(L, ctx, idx);
  return JSON.stringify(v === undefined ? null : v);
}

/** Parses JSON bytes or text and pushes the result. @throws SyntaxError on invalid JSON. */
export function decodeJsonPush(L: LuaState, ctx: ConvertContext, text: Uint8Array | string): void {
  const s = typeof text === 'string' ? text : decodeUtf8(text);
  pushJs(L, ctx, JSON.parse(s) as unknown);
}
