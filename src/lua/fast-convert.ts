/**
 * Fast paths of the JS <-> Lua conversions (same rules as convert.ts) that
 * build and read fengari tables directly instead of through the C-style API,
 * which costs several checks, copies and stack moves per value. This is where
 * a 32 KB request or a stream chunk spends most of its time.
 *
 * fengari 0.1.5 internals used: ltable (Table with an insertion-ordered
 * linked list `f`/`n`, luaH_new/luaH_setint/luaH_setfrom/luaH_getint/
 * luaH_getn), lobject.TValue, lstring.luaS_bless and the type tags of
 * defs.constant_types. `fastConvertAvailable` is false when they do not look
 * as expected, and the callers use the API path instead.
 */
import { createRequire } from 'node:module';
import { lua, type LuaState } from './fengari.js';
import { JSON_NULL, MAX_DEPTH, ConvertError, assembleTable, decodeUtf8, encodeUtf8 } from './convert.js';

interface TString {
  realstring: Uint8Array;
}
interface TValue {
  type: number;
  value: unknown;
}
interface Entry {
  key: TValue;
  value: TValue;
  n?: Entry;
}
interface Table {
  f?: Entry;
  metatable: Table | null;
}
interface Internals {
  TValue: new (type: number, value: unknown) => TValue;
  luaH_new(L: LuaState): Table;
  luaH_setint(t: Table, k: number, v: TValue): void;
  luaH_setfrom(L: LuaState, t: Table, k: TValue, v: TValue): void;
  luaH_getint(t: Table, k: number): TValue;
  luaH_getn(t: Table): number;
  luaS_bless(L: LuaState, s: Uint8Array): TString;
  T: { NIL: number; BOOL: number; LUD: number; INT: number; FLT: number; SHR: number; LNG: number; TABLE: number };
}

function load(): Internals | null {
  try {
    const require = createRequire(import.meta.url);
    const ltable = require('fengari/src/ltable.js') as Record<string, unknown>;
    const lobject = require('fengari/src/lobject.js') as Record<string, unknown>;
    const lstring = require('fengari/src/lstring.js') as Record<string, unknown>;
    const defs = require('fengari/src/defs.js') as { constant_types: Record<string, number> };
    const ct = defs.constant_types;
    const fns = [ltable.luaH_new, ltable.luaH_setint, ltable.luaH_setfrom, ltable.luaH_getint, ltable.luaH_getn, lstring.luaS_bless, lobject.TValue];
    if (fns.some((f) => typeof f !== 'function')) return null;
    const T = { NIL: ct.LUA_TNIL!, BOOL: ct.LUA_TBOOLEAN!, LUD: ct.LUA_TLIGHTUSERDATA!, INT: ct.LUA_TNUMINT!, FLT: ct.LUA_TNUMFLT!, SHR: ct.LUA_TSHRSTR!, LNG: ct.LUA_TLNGSTR!, TABLE: ct.LUA_TTABLE! };
    if (Object.values(T).some((v) => typeof v !== 'number')) return null;
    return {
      TValue: lobject.TValue as Internals['TValue'],
      luaH_new: ltable.luaH_new as Internals['luaH_new'],
      luaH_setint: ltable.luaH_setint as Internals['luaH_setint'],
      luaH_setfrom: ltable.luaH_setfrom as Internals['luaH_setfrom'],
      luaH_getint: ltable.luaH_getint as Internals['luaH_getint'],
      luaH_getn: ltable.luaH_getn as Internals['luaH_getn'],
      luaS_bless: lstring.luaS_bless as Internals['luaS_bless'],
      T,
    };
  } catch {
    return null;
  }
}

const I = load();

/** Per-VM state of the fast path. */
export interface FastContext {
  /** The array-marker metatable (the Table object). */
  arrayMt: Table;
  /** Interned key strings (their hash is computed once). */
  keys: Map<string, TString>;
}

interface StackAccess {
  stack: TValue[];
  top: number;
}

/** Whether the fengari internals were found; otherwise use convert.ts. */
export const fastConvertAvailable = I !== null;

/** Builds the fast context of a VM from its array-marker registry reference. */
export function createFastContext(L: LuaState, arrayMtRef: number): FastContext | null {
  if (!I) return null;
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, arrayMtRef);
  const tv = (L as unknown as StackAccess).stack[(L as unknown as StackAccess).top - 1];
  lua.lua_pop(L, 1);
  if (!tv || tv.type !== I.T.TABLE) return null;
  const t = tv.value as Table;
  if (!('f' in t) || !('metatable' in t)) return null;
  return { arrayMt: t, keys: new Map() };
}

const KEYS_MAX = 4096;

function keyTString(L: LuaState, ctx: FastContext, k: string): TString {
  let ts = ctx.keys.get(k);
  if (!ts) {
    ts = I!.luaS_bless(L, encodeUtf8(k));
    if (ctx.keys.size < KEYS_MAX) ctx.keys.set(k, ts);
  }
  return ts;
}

function toTV(L: LuaState, ctx: FastContext, v: unknown, depth: number): TValue | null {
  const { TValue, T } = I!;
  switch (typeof v) {
    case 'string':
      return new TValue(T.LNG, I!.luaS_bless(L, encodeUtf8(v)));
    case 'number':
      return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? new TValue(T.INT, v) : new TValue(T.FLT, v);
    case 'boolean':
      return new TValue(T.BOOL, v);
    case 'object': {
      if (v === null) return new TValue(T.LUD, JSON_NULL);
      if (depth > MAX_DEPTH) throw new ConvertError(`nesting deeper than ${MAX_DEPTH}`);
      if (v instanceof Uint8Array) return new TValue(T.LNG, I!.luaS_bless(L, v.slice()));
      const t = I!.luaH_new(L);
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const e = toTV(L, ctx, v[i], depth + 1);
          if (e) I!.luaH_setint(t, i + 1, e);
        }
        t.metatable = ctx.arrayMt;
      } else {
        const obj = v as Record<string, unknown>;
        for (const k in obj) {
          const e = toTV(L, ctx, obj[k], depth + 1);
          if (e) I!.luaH_setfrom(L, t, new TValue(T.LNG, keyTString(L, ctx, k)), e);
        }
      }
      return new TValue(T.TABLE, t);
    }
    default:
      return null;
  }
}

/** Pushes `v` (as pushJs does) by building the tables directly. @throws ConvertError. */
export function fastPushJs(L: LuaState, ctx: FastContext, v: unknown): void {
  const tv = toTV(L, ctx, v, 0);
  if (!lua.lua_checkstack(L, 1)) throw new ConvertError('Lua stack overflow');
  if (!tv) {
    lua.lua_pushnil(L);
    return;
  }
  const s = L as unknown as StackAccess;
  s.stack[s.top] = tv;
  s.top++;
}

const decodedKeys = new WeakMap<Uint8Array, string>();

function fromTV(ctx: FastContext, tv: TValue, depth: number): unknown {
  const T = I!.T;
  switch (tv.type) {
    case T.NIL:
      return undefined;
    case T.BOOL:
    case T.INT:
    case T.FLT:
      return tv.value;
    case T.SHR:
    case T.LNG:
      return decodeUtf8((tv.value as TString).realstring);
    case T.LUD:
      return tv.value === JSON_NULL ? null : undefined;
    case T.TABLE:
      return tableFrom(ctx, tv.value as Table, depth);
    default:
      return undefined;
  }
}

function tableFrom(ctx: FastContext, t: Table, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ConvertError(`table nesting deeper than ${MAX_DEPTH} (cycle?)`);
  const T = I!.T;
  if (t.metatable === ctx.arrayMt) {
    const n = I!.luaH_getn(t);
    const out: unknown[] = new Array(n);
    for (let i = 1; i <= n; i++) {
      const v = fromTV(ctx, I!.luaH_getint(t, i), depth + 1);
      out[i - 1] = v === undefined ? null : v;
    }
    return out;
  }
  const keys: Array<string | number> = [];
  const vals: unknown[] = [];
  let allInt = true;
  for (let e = t.f; e; e = e.n) {
    const k = e.key;
    let key: string | number;
    if (k.type === T.INT) key = k.value as number;
    else if (k.type === T.SHR || k.type === T.LNG) {
      const b = (k.value as TString).realstring;
      let s = decodedKeys.get(b);
      if (s === undefined) {
        s = decodeUtf8(b);
        decodedKeys.set(b, s);
      }
      key = s;
      allInt = false;
    } else if (k.type === T.FLT) {
      key = String(k.value);
      allInt = false;
    } else continue;
    const v = fromTV(ctx, e.value, depth + 1);
    if (v === undefined) continue;
    keys.push(key);
    vals.push(v);
  }
  return assembleTable(keys, vals, allInt);
}

/** Reads the value at stack index `idx` (as toJs does) walking tables directly. @throws ConvertError. */
export function fastToJs(L: LuaState, ctx: FastContext, idx: number): unknown {
  lua.lua_pushvalue(L, idx);
  const s = L as unknown as StackAccess;
  const tv = s.stack[s.top - 1]!;
  lua.lua_pop(L, 1);
  return fromTV(ctx, tv, 0);
}
