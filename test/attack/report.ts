/**
 * Figures of the attack script: each attack returns figures, each with its
 * pass rule, printed as `attack.<name>: <value> <unit> (pass <rule>) ok|FAIL`.
 * The run fails when any figure fails (or an attack could not measure one).
 */

/** One measured figure and whether it passes. */
export interface Figure {
  /** Without the `attack.` prefix, e.g. `reconnect_ms`. */
  name: string;
  value: number;
  unit: string;
  /** The pass rule as printed, e.g. `< 2500`, `0`. */
  rule: string;
  ok: boolean;
  /** What the figure counts or why it failed, printed as a `#` line under it. */
  detail?: string;
}

/** A figure that passes when `value < limit`. */
export function below(name: string, value: number, unit: string, limit: number, detail?: string): Figure {
  return { name, value, unit, rule: `< ${limit}`, ok: Number.isFinite(value) && value < limit, ...(detail ? { detail } : {}) };
}

/** A figure that passes when `value === want` (counts of things that must not happen: want 0). */
export function exactly(name: string, value: number, unit: string, want: number, detail?: string): Figure {
  return { name, value, unit, rule: `${want}`, ok: value === want, ...(detail ? { detail } : {}) };
}

/** A figure that passes when `lo <= value <= hi`. */
export function within(name: string, value: number, unit: string, lo: number, hi: number, detail?: string): Figure {
  return { name, value, unit, rule: `${lo}..${hi}`, ok: Number.isFinite(value) && value >= lo && value <= hi, ...(detail ? { detail } : {}) };
}

/** A figure an attack could not measure (it threw or timed out): always a failure. */
export function unmeasured(name: string, unit: string, rule: string, why: string): Figure {
  return { name, value: NaN, unit, rule, ok: false, detail: `not measured: ${why}` };
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  if (Number.isInteger(v)) return String(v);
  const t = v.toFixed(1);
  return t === '-0.0' ? '0.0' : t;
}

/** The printed line of a figure (and its detail line). */
export function formatFigure(f: Figure): string {
  const line = `attack.${f.name}: ${fmt(f.value)} ${f.unit} (pass ${f.rule}) ${f.ok ? 'ok' : 'FAIL'}`;
  return f.detail ? `${line}\n#   ${f.detail.replace(/\n/g, '\n#   ')}` : line;
}
