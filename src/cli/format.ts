/**
 * Human-readable printing of maintenance command results: `status` and
 * `devices` as short tables (times as clock times and durations, brightness in
 * percent, no phoneme lists), `config list` with where each value comes from
 * and which settings need a restart, `doctor` as ok/FAIL lines with the fix.
 * `--json` prints the JSON result instead (one line, for scripts).
 */

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Where printed text goes (tests capture it). */
export type Out = (s: string) => void;

const stdout: Out = (s) => void process.stdout.write(s.endsWith('\n') ? s : s + '\n');

/** A local clock time (HH:MM:SS) of ms since epoch or an ISO string; today's date is left out. */
export function clockTime(t: number | string, now = Date.now()): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date(now);
  return d.toDateString() === today.toDateString() ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** A duration in seconds as "3 d 4 h", "2 h 5 min", "4 min 10 s" or "12 s". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min ${s % 60} s`;
  return `${s} s`;
}

/** Rows as aligned columns under a header; cells are cut at `max` characters. */
export function table(header: string[], rows: string[][], max = 60): string {
  const cut = (c: string) => (c.length > max ? c.slice(0, max - 1) + '…' : c);
  const all = [header, ...rows].map((r) => r.map((c) => cut(c.replace(/\s+/g, ' '))));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** Brightness on the registry's 0-255 scale as percent (the scale every light is normalised to). */
export function brightnessPercent(b: number): number {
  return Math.round((b / 255) * 100);
}

/** One device's state in words: "on, 30 %", "open, 40 %", "21.5 °C, target 22 °C, heat", "locked". */
export function deviceState(component: string, st: Record<string, unknown>): string {
  const parts: string[] = [];
  const n = (v: unknown) => (typeof v === 'number' ? String(Math.round(v * 10) / 10) : undefined);
  if (component === 'climate') {
    if (n(st.current_temperature)) parts.push(`${n(st.current_temperature)} °C`);
    if (n(st.target_temperature)) parts.push(`target ${n(st.target_temperature)} °C`);
    if (typeof st.mode === 'string') parts.push(st.mode);
    return parts.join(', ') || '?';
  }
  if (typeof st.state === 'string') parts.push(component === 'sensor' && typeof st.unit === 'string' ? `${st.state} ${st.unit}` : st.state);
  if (component === 'light' && st.state !== 'off' && typeof st.brightness === 'number') parts.push(`${brightnessPercent(st.brightness)} %`);
  if (component === 'cover' && typeof st.position === 'number') parts.push(`${st.position} %`);
  if (component === 'fan' && typeof st.percentage === 'number') parts.push(`${st.percentage} %`);
  return parts.join(', ') || '?';
}

/** The devices result with brightness in percent added (`brightness_pct`), for --json too. */
export function withPercent(devices: unknown): unknown {
  if (!Array.isArray(devices)) return devices;
  return devices.map((d: unknown) => {
    if (!isRecord(d) || !isRecord(d.state) || typeof d.state.brightness !== 'number') return d;
    return { ...d, state: { ...d.state, brightness_pct: brightnessPercent(d.state.brightness) } };
  });
}

function statusText(r: Record<string, unknown>): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(10)} ${v}`);
  row('HomeAgent', `up ${duration(Number(r.uptime_s ?? 0))}, data in ${String(r.data_dir ?? '?')}`);
  const llm = isRecord(r.llm) ? r.llm : {};
  const sources = Array.isArray(llm.sources) ? (llm.sources as Array<Record<string, unknown>>) : [];
  row('LLM', llm.last_source ? `last answer from ${String(llm.last_source)} (${String(llm.last_model ?? '?')})` : 'no answer yet');
  for (const s of sources) {
    const state = s.state === 'backoff' && typeof s.retry_at === 'number' ? `backing off until ${clockTime(s.retry_at)}` : String(s.state ?? '?');
    lines.push(`           ${String(s.name)}: ${String(s.model)} at ${String(s.base_url)}, ${state}${s.last_error ? ` (${String(s.last_error)})` : ''}`);
  }
  const b = isRecord(r.broker) ? r.broker : {};
  row('Broker', `${String(b.url ?? '?')}${b.embedded ? ' (embedded)' : ''}, ${b.connected ? 'connected' : 'NOT connected'}`);
  row('Devices', String(r.devices ?? 0));
  const v = isRecord(r.voice) ? r.voice : {};
  if (v.running === false) row('Voice', 'not running (text only)');
  else {
    const stt = isRecord(v.stt) ? v.stt : {};
    const g = isRecord(stt.grammar) ? stt.grammar : {};
    const grammar = g.state === 'ready' ? `grammar ready (${String(g.entities ?? 0)} devices, ${String(g.words ?? '?')} words)` : `grammar ${String(g.state ?? '?')}${g.error ? `: ${String(g.error)}` : ''}`;
    row('Voice', `speaker ${String(v.speaker ?? '?')}${v.simulated ? ' (simulated audio)' : ''}; recognition ${String(stt.order ?? '?')}, ${grammar}`);
    // How the box can be woken (src/service/wake-ways.ts) and the wake service's connection.
    const w = isRecord(v.wake) ? v.wake : undefined;
    if (w) {
      const ways = Array.isArray(w.ways) ? w.ways.map(String) : [];
      const problems = Array.isArray(w.problems) ? w.problems.map(String) : [];
      const conn = isRecord(w.connection) ? w.connection : undefined;
      for (const [i, way] of ways.entries()) row(i === 0 ? 'Wake' : '', way);
      if (conn) row(ways.length ? '' : 'Wake', `wake service ${String(w.service ?? '?')}: ${conn.state === 'connected' ? 'connected' : `NOT connected (${String(conn.state)}${conn.error ? `: ${String(conn.error)}` : ''}; it reconnects by itself)`}`);
      for (const p of problems) row(ways.length || conn ? '' : 'Wake', `WARNING: ${p}`);
    }
  }
  const a = isRecord(r.agent) ? r.agent : {};
  row('Agent', `${a.running ? 'answering' : 'idle'}, ${Number(a.queue ?? 0) + Number(a.pending ?? 0) + Number(a.inbox ?? 0)} waiting`);
  const plugins = Array.isArray(r.plugins) ? (r.plugins as Array<Record<string, unknown>>) : [];
  const bad = plugins.filter((p) => p.state !== 'running');
  row('Plugins', `${plugins.length - bad.length} of ${plugins.length} running${bad.length ? '; ' + bad.map((p) => `${String(p.name)} ${String(p.state)}${p.error ? ` (${String(p.error)})` : ''}`).join(', ') : ''}`);
  const pending = Array.isArray(r.restart_pending) ? (r.restart_pending as Array<Record<string, unknown>>) : [];
  if (pending.length) row('Restart', `needed: ${pending.map((p) => `${String(p.key)} changed at ${clockTime(Number(p.changed_at))}`).join(', ')} (sudo systemctl restart homeagent)`);
  const errs = Array.isArray(r.last_errors) ? (r.last_errors as Array<Record<string, unknown>>) : [];
  if (errs.length) {
    row('Problems', `last ${Math.min(errs.length, 5)}:`);
    for (const e of errs.slice(-5)) lines.push(`           ${clockTime(String(e.time))} ${String(e.level)} ${String(e.ns).replace(/^homeagent:/, '')}: ${String(e.msg)}${e.err ? ` (${String(e.err)})` : ''}`);
  } else row('Problems', 'none');
  return lines.join('\n');
}

function logLine(r: Record<string, unknown>): string {
  const at = clockTime(String(r.at));
  const p = isRecord(r.payload) ? r.payload : {};
  switch (r.event) {
    case 'plugin.home.command':
      return `${at} mqtt  ${String(p.topic)} ${String(p.payload)}`;
    case 'log':
      return `${at} ${String(p.level).padEnd(5)} ${String(p.ns).replace(/^homeagent:/, '')}: ${String(p.msg)}${p.err ? ` (${String(p.err)})` : ''}`;
    case 'raw_input':
      return `${at} input ${String(p.channel ?? '')}: ${JSON.stringify(p.text ?? p.content ?? '')}`;
    case 'output':
      return `${at} reply ${String(p.channel ?? '')} ${String(p.kind ?? '')}: ${JSON.stringify(p.content ?? '')}`;
    case 'error':
      return `${at} ERROR ${String(p.where ?? '')}: ${String(p.message ?? JSON.stringify(p))}`;
    default:
      return `${at} ${String(r.event)} ${JSON.stringify(r.payload)}`;
  }
}

/** Print `result` of `cmd`. */
export function printResult(cmd: string, result: unknown, json: boolean, out: Out = stdout): void {
  if (cmd === 'devices') result = withPercent(result);
  if (json) return out(JSON.stringify(result));
  if (result === null || result === undefined) return;
  switch (cmd) {
    case 'status':
      if (isRecord(result)) return out(statusText(result));
      break;
    case 'devices':
      if (Array.isArray(result)) {
        if (result.length === 0) return out('no devices known (none announced on the broker yet)');
        const rows = (result as Array<Record<string, unknown>>).map((d) => [String(d.name), String(d.area ?? '') || '-', String(d.component), d.available === false ? 'unavailable' : deviceState(String(d.component), isRecord(d.state) ? d.state : {}), String(d.id)]);
        return out(table(['NAME', 'ROOM', 'TYPE', 'STATE', 'ID'], rows));
      }
      break;
    case 'ask':
      if (isRecord(result)) {
        if (result.status === 'error' && !result.reply) out(`error: ${String(result.error ?? 'the turn failed')}`);
        else out(String(result.reply || `(${String(result.status)})`));
        if (Array.isArray(result.tools) && result.tools.length) for (const t of result.tools as Array<Record<string, unknown>>) out(`  tool ${String(t.name)} ${JSON.stringify(t.arguments)} -> ${String(t.result).slice(0, 200)}`);
        return;
      }
      break;
    case 'config.list':
      if (Array.isArray(result)) {
        const rows = (result as Array<Record<string, unknown>>).map((r) => [String(r.key), JSON.stringify(r.value) ?? '', `${String(r.source)}${r.restart ? ', restart' : ''}`]);
        return out(table(['KEY', 'VALUE', 'FROM'], rows, 80) + '\n(FROM: default, stored or env; "restart": read when the service starts. `homeagent config get KEY` for one, `--json` for descriptions)');
      }
      break;
    case 'config.get':
    case 'config.set':
      if (isRecord(result)) {
        out(JSON.stringify(result.value));
        if (result.note) process.stderr.write(`note: ${String(result.note)}\n`);
        return;
      }
      break;
    case 'log':
      if (isRecord(result)) return out(logLine(result));
      break;
    case 'doctor':
      if (isRecord(result) && Array.isArray(result.checks)) {
        for (const c of result.checks as Array<Record<string, unknown>>) out(`${c.ok ? 'ok  ' : 'FAIL'} ${String(c.name)}: ${String(c.detail)}${!c.ok && c.fix ? `\n     fix: ${String(c.fix)}` : ''}`);
        return;
      }
      break;
    case 'listen':
      if (isRecord(result) && Array.isArray(result.utterances)) {
        for (const u of result.utterances as Array<Record<string, unknown>>) {
          out(`${String(u.file)}`);
          if (u.status === 'error') {
            out(`  error: ${String(u.error ?? u.reply)}`);
            continue;
          }
          out(`  transcript: ${JSON.stringify(u.transcript)}${u.rejected ? ' (rejected)' : ''}`);
          if (Array.isArray(u.actions)) for (const a of u.actions) out(`  did: ${typeof a === 'string' ? a : JSON.stringify(a)}`);
          out(`  reply: ${JSON.stringify(u.reply)}`);
          if (u.wav) out(`  spoken reply written to ${String(u.wav)}`);
          if (isRecord(u.timings)) out(`  timings: ${Object.entries(u.timings).map(([k, v]) => `${k}=${typeof v === 'number' ? v.toFixed(0) : String(v)}ms`).join(' ')}`);
        }
        return;
      }
      break;
  }
  out(typeof result === 'string' ? result : JSON.stringify(result, null, 2));
}
