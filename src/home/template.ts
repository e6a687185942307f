/**
 * A small, safe subset of Home Assistant's Jinja value templates: the forms
 * devices put in discovery payloads (`{{ value }}`, `{{ value_json.key }}`,
 * `{{ value_json['a'].b[0] }}`) with the common filters `float`, `int`,
 * `round(n)`, `lower`, `upper`, `string`, `default(x)`, and literal text
 * around the expressions. Anything else is reported as unsupported rather
 * than guessed (source: HA docs "Processing incoming data", value_template).
 */
import { parseJson } from '../kernel/json.js';

/** Result of rendering: the text, or why it could not be rendered. */
export type TemplateResult = { ok: true; value: string } | { ok: false; reason: 'unsupported' | 'missing' | 'not_json' };

const PATH_RE = /^(value_json|value)((?:\.[A-Za-z_][\w]*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\])*)$/;

function walk(root: unknown, pathText: string): { found: boolean; value: unknown } {
  const steps = pathText.match(/\.[A-Za-z_]\w*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\]/g) ?? [];
  let cur: unknown = root;
  for (const step of steps) {
    let key: string | number;
    if (step.startsWith('.')) key = step.slice(1);
    else {
      const inner = step.slice(1, -1).trim();
      key = /^\d+$/.test(inner) ? Number(inner) : inner.slice(1, -1);
    }
    if (typeof key === 'number') {
      if (!Array.isArray(cur) || key >= cur.length) return { found: false, value: undefined };
      cur = cur[key];
    } else {
      if (typeof cur !== 'object' || cur === null || !(key in cur)) return { found: false, value: undefined };
      cur = (cur as Record<string, unknown>)[key];
    }
  }
  return { found: true, value: cur };
}

function toText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

function applyFilter(v: unknown, filter: string): { ok: boolean; value: unknown } {
  const m = /^(\w+)\s*(?:\((.*)\))?$/.exec(filter.trim());
  if (!m) return { ok: false, value: v };
  const [, name, argText] = m;
  const arg = argText?.trim();
  const literal = (s: string | undefined): unknown => {
    if (s === undefined || s === '') return undefined;
    if (/^'.*'$|^".*"$/.test(s)) return s.slice(1, -1);
    if (s === 'true' || s === 'True') return true;
    if (s === 'false' || s === 'False') return false;
    const n = Number(s);
    return Number.isFinite(n) ? n : undefined;
  };
  switch (name) {
    case 'float':
    case 'int': {
      const n = typeof v === 'number' ? v : Number.parseFloat(toText(v));
      if (!Number.isFinite(n)) {
        const d = literal(arg);
        return d === undefined ? { ok: false, value: v } : { ok: true, value: d };
      }
      return { ok: true, value: name === 'int' ? Math.trunc(n) : n };
    }
    case 'round': {
      const n = typeof v === 'number' ? v : Number.parseFloat(toText(v));
      if (!Number.isFinite(n)) return { ok: false, value: v };
      const digits = typeof literal(arg) === 'number' ? (literal(arg) as number) : 0;
      const f = 10 ** digits;
      return { ok: true, value: Math.round(n * f) / f };
    }
    case 'lower':
      return { ok: true, value: toText(v).toLowerCase() };
    case 'upper':
      return { ok: true, value: toText(v).toUpperCase() };
    case 'string':
    case 'trim':
      return { ok: true, value: toText(v).trim() };
    default:
      return { ok: false, value: v };
  }
}

/**
 * Render `template` against an incoming payload `raw` (UTF-8 text).
 * `value` is the raw text, `value_json` its JSON parse. Missing keys give
 * `{ok:false, reason:'missing'}` unless a `default(x)` filter supplies one.
 */
export function renderTemplate(template: string, raw: string): TemplateResult {
  let json: unknown;
  let jsonParsed = false;
  const getJson = (): unknown => {
    if (!jsonParsed) {
      jsonParsed = true;
      try {
        json = parseJson(raw);
      } catch {
        json = undefined;
      }
    }
    return json;
  };
  let out = '';
  let rest = template;
  for (;;) {
    const start = rest.indexOf('{{');
    if (start < 0) {
      if (rest.includes('{%')) return { ok: false, reason: 'unsupported' };
      out += rest;
      break;
    }
    if (rest.slice(0, start).includes('{%')) return { ok: false, reason: 'unsupported' };
    out += rest.slice(0, start);
    const end = rest.indexOf('}}', start);
    if (end < 0) return { ok: false, reason: 'unsupported' };
    const expr = rest.slice(start + 2, end).trim();
    rest = rest.slice(end + 2);
    const parts = expr.split('|').map((p) => p.trim());
    const head = parts[0] ?? '';
    const m = PATH_RE.exec(head.replace(/\s+/g, ''));
    if (!m) return { ok: false, reason: 'unsupported' };
    let value: unknown;
    let found = true;
    if (m[1] === 'value') {
      if (m[2]) return { ok: false, reason: 'unsupported' };
      value = raw;
    } else {
      const root = getJson();
      if (root === undefined) return { ok: false, reason: 'not_json' };
      const w = walk(root, m[2] ?? '');
      found = w.found;
      value = w.value;
    }
    for (const f of parts.slice(1)) {
      const dm = /^default\s*\((.*)\)$/.exec(f);
      if (dm) {
        if (!found || value === undefined || value === null) {
          const a = (dm[1] ?? '').trim();
          value = /^'.*'$|^".*"$/.test(a) ? a.slice(1, -1) : a;
          found = true;
        }
        continue;
      }
      if (!found) break;
      const r = applyFilter(value, f);
      if (!r.ok) return { ok: false, reason: 'unsupported' };
      value = r.value;
    }
    if (!found) return { ok: false, reason: 'missing' };
    out += toText(value);
  }
  return { ok: true, value: out };
}

/** Render a command template (`{{ value }}` is the outgoing value). Unsupported forms return undefined. */
export function renderCommandTemplate(template: string, value: string | number): string | undefined {
  const r = renderTemplate(template, String(value));
  return r.ok ? r.value : undefined;
}
