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

/**
 * Columns `s` takes in a terminal: East Asian wide and fullwidth characters
 * (CJK ideographs, kana, Hangul, fullwidth forms, CJK punctuation; Unicode
 * UAX #11 W/F) count 2, combining marks and zero-width characters 0, the rest 1.
 */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0)!);
  return w;
}

/** Terminal columns of one code point (see displayWidth). */
function charWidth(cp: number): number {
  if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfeff || (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) || // Hangul Jamo
    (cp >= 0x2e80 && cp <= 0x303e) || // CJK radicals, Kangxi, CJK symbols and punctuation
    (cp >= 0x3041 && cp <= 0x33ff) || // kana, bopomofo, CJK compatibility
    (cp >= 0x3400 && cp <= 0x4dbf) || // CJK extension A
    (cp >= 0x4e00 && cp <= 0x9fff) || // CJK unified ideographs
    (cp >= 0xa000 && cp <= 0xa4cf) || // Yi
    (cp >= 0xac00 && cp <= 0xd7a3) || // Hangul syllables
    (cp >= 0xf900 && cp <= 0xfaff) || // CJK compatibility ideographs
    (cp >= 0xfe30 && cp <= 0xfe4f) || // CJK compatibility forms
    (cp >= 0xff00 && cp <= 0xff60) || // fullwidth forms
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) || // pictographs and emoticons
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd) // CJK extensions B and later
  )
    return 2;
  return 1;
}

/** `s` padded with spaces to `width` terminal columns (displayWidth). */
export function padEndDisplay(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - displayWidth(s)));
}

/** `s` cut to at most `max` terminal columns, ending in "…" when cut. */
export function cutDisplay(s: string, max: number): string {
  if (displayWidth(s) <= max) return s;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0)!);
    if (w + cw > max - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

/** Rows as aligned columns under a header; cells are cut at `max` terminal columns (CJK characters count 2: displayWidth). */
export function table(header: string[], rows: string[][], max = 60): string {
  const all = [header, ...rows].map((r) => r.map((c) => cutDisplay(c.replace(/\s+/g, ' '), max)));
  const widths = header.map((_, i) => Math.max(...all.map((r) => displayWidth(r[i] ?? ''))));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : padEndDisplay(c, widths[i]!))).join('  ').trimEnd()).join('\n');
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

/**
 * A source's back-off in words: "backing off until HH:MM:SS" while `retryAt`
 * (ms since epoch) is in the future; once it has passed the source is tried
 * again by the next request (src/providers/manager.ts), which this says.
 */
export function backoffText(retryAt: unknown, now = Date.now()): string {
  if (typeof retryAt === 'number' && retryAt > now) return `backing off until ${clockTime(retryAt, now)}`;
  return 'backing off: retrying on the next request';
}

function statusText(r: Record<string, unknown>, now = Date.now()): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(10)} ${v}`);
  row('HomeAgent', `up ${duration(Number(r.uptime_s ?? 0))}, data in ${String(r.data_dir ?? '?')}`);
  const llm = isRecord(r.llm) ? r.llm : {};
  const sources = Array.isArray(llm.sources) ? (llm.sources as Array<Record<string, unknown>>) : [];
  row('LLM', llm.last_source ? `last answer from ${String(llm.last_source)} (${String(llm.last_model ?? '?')})` : 'no answer yet');
  for (const s of sources) {
    const state = s.state === 'backoff' ? backoffText(s.retry_at, now) : String(s.state ?? '?');
    lines.push(`           ${String(s.name)}: ${String(s.model)} at ${String(s.base_url)}, ${state}${s.last_error ? ` (${String(s.last_error)})` : ''}`);
  }
  const em = isRecord(r.embeddings) ? r.embeddings : undefined;
  if (em) {
    const progress = `${String(em.done ?? 0)}/${String(em.total ?? 0)} documents`;
    const text =
      em.state === 'off'
        ? 'none configured: memory recall is lexical only'
        : em.state === 'unavailable'
          ? `${String(em.fingerprint)} unavailable (${String(em.reason ?? '?')}): lexical only; ${progress}`
          : em.state === 'indexing'
            ? `${String(em.fingerprint)}: computing in the background, ${progress}`
            : `${String(em.fingerprint)}: ready, ${progress}`;
    row('Embedding', text);
  }
  const b = isRecord(r.broker) ? r.broker : {};
  row('Broker', `${String(b.url ?? '?')}${b.embedded ? ' (embedded)' : ''}, ${b.connected ? 'connected' : 'NOT connected'}`);
  row('Devices', String(r.devices ?? 0));
  const web = isRecord(r.webui) ? r.webui : undefined;
  if (web) row('WebUI', web.running ? `${web.https ? 'https' : 'http'} on port ${String(web.port)} (homeagent webui link makes a login link)` : 'off');
  const q = isRecord(r.question) ? r.question : undefined;
  if (q) row('Question', `waiting for a yes or no on ${String(q.channel)}: ${JSON.stringify(String(q.question))} (asked ${clockTime(Number(q.asked_at), now)}, nothing is done unless answered by ${clockTime(Number(q.expires_at), now)})`);
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
  row('Plugins', `${plugins.length - bad.length} of ${plugins.length} running${bad.length ? '; ' + bad.map((p) => `${String(p.name)} ${String(p.state)}${p.error ? ` (${String(p.error)})` : ''}${pluginRetry(p, now)}`).join(', ') : ''}`);
  // Restarted by the supervisor (issue 17): how often, and the last error.
  const restarted = plugins.filter((p) => p.state === 'running' && Number(p.restarts ?? 0) > 0);
  if (restarted.length) row('', `restarted: ${restarted.map((p) => `${String(p.name)} ${String(p.restarts)}x${p.last_error ? ` (last error: ${String(p.last_error)})` : ''}`).join(', ')}`);
  const held = Array.isArray(r.plugins_held) ? (r.plugins_held as Array<Record<string, unknown>>) : [];
  for (const p of held) row('', `${String(p.name)} ${String(p.state)}${p.message ? `: ${String(p.message)}` : ''}`);
  const disk = isRecord(r.disk) ? r.disk : undefined;
  if (disk && Array.isArray(disk.areas)) {
    const areas = disk.areas as Array<Record<string, unknown>>;
    const sizes = areas.map((a) => `${String(a.name)} ${String(a.used_mb)}${Number(a.max_mb) > 0 ? `/${String(a.max_mb)}` : ''} MB`).join(', ');
    const warn = areas.filter((a) => typeof a.warning === 'string').map((a) => String(a.warning));
    row('Disk', `${sizes}${typeof disk.free_mb === 'number' ? `; ${disk.free_mb} MB free` : ''}${warn.length ? `; ${warn.join('; ')}` : ''}`);
  }
  const pending = Array.isArray(r.restart_pending) ? (r.restart_pending as Array<Record<string, unknown>>) : [];
  if (pending.length) row('Restart', `needed: ${pending.map((p) => `${String(p.key)} changed at ${clockTime(Number(p.changed_at))}`).join(', ')} (sudo systemctl restart homeagent)`);
  const errs = Array.isArray(r.last_errors) ? (r.last_errors as Array<Record<string, unknown>>) : [];
  if (errs.length) {
    row('Problems', `last ${Math.min(errs.length, 5)}:`);
    for (const e of errs.slice(-5)) lines.push(`           ${clockTime(String(e.time))} ${String(e.level)} ${String(e.ns).replace(/^homeagent:/, '')}: ${String(e.msg)}${e.err ? ` (${String(e.err)})` : ''}`);
  } else row('Problems', 'none');
  return lines.join('\n');
}

/** A setting's value in words: a plain string as it is, anything else (numbers, lists, "", padded strings) as JSON. */
export function valueText(v: unknown): string {
  if (typeof v === 'string' && v !== '' && v === v.trim() && !/[\n"]/.test(v)) return v;
  return JSON.stringify(v) ?? String(v);
}

/** Stage timings (`speech_ms: 1760`, ...) as "speech 1760 ms, endpoint wait 310 ms"; absent stages are left out. */
export function timingsText(t: Record<string, unknown>): string {
  return Object.entries(t)
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v))
    .map(([k, v]) => `${k.replace(/_ms$/, '').replace(/_/g, ' ')} ${(v as number).toFixed(0)} ms`)
    .join(', ');
}

/** `memory stats` (MemorySystem.introspect): counts one per line, then the most mentioned entities. */
function memoryStatsText(r: Record<string, unknown>): string {
  if (typeof r.error === 'string') return r.error;
  const lines: string[] = [];
  const top = Array.isArray(r.top_entities) ? (r.top_entities as Array<Record<string, unknown>>) : [];
  const counts = Object.entries(r).filter(([k, v]) => k !== 'top_entities' && (typeof v === 'number' || typeof v === 'string'));
  const width = Math.max(0, ...counts.map(([k]) => k.length)) + 1;
  for (const [k, v] of counts) lines.push(`${(k.replace(/_/g, ' ') + ':').padEnd(width + 1)} ${String(v)}`);
  const mentions = (n: unknown): string => `${String(n)} mention${n === 1 ? '' : 's'}`;
  lines.push(top.length ? `most mentioned: ${top.map((e) => `${String(e.name)} (${String(e.type)}, ${mentions(e.mention_count)})`).join(', ')}` : 'most mentioned: none yet');
  return lines.join('\n');
}

/**
 * A timer started, changed or cancelled (event plugin.timers.changed) in words: "timer started: 30 s (id ...)",
 * "timer pasta cancelled: 10 min". What `homeagent listen` lists as done and `homeagent logs` shows.
 */
export function timerChangeText(c: Record<string, unknown>): string {
  const name = typeof c.name === 'string' && c.name ? ` ${c.name}` : '';
  return `timer${name} ${String(c.change)}: ${duration(Number(c.seconds ?? 0))} (id ${String(c.id)})`;
}

/** How a risky action's question was settled, in words: "yes on voice", "no by the button", "no answer in time". */
function decisionHow(p: Record<string, unknown>): string {
  const answer = p.decision === 'confirmed' ? 'yes' : 'no';
  switch (p.by) {
    case 'input':
      return `${answer} on ${String(p.channel ?? '?')}`;
    case 'button':
      return `${answer} by the button`;
    case 'api':
      return `${answer} by the API`;
    case 'stop':
      return 'stopped';
    case 'timer':
      return 'no answer in time';
    default:
      return p.decision === 'superseded' ? 'another question came' : 'dropped';
  }
}

/** Who asked, for a person: a person's name or a source, with the CLI's control socket said as what it is (a newcomer read "asked by control"). */
function askedBy(who: string): string {
  return who === 'control' ? 'the CLI (homeagent ask)' : who;
}

function logLine(r: Record<string, unknown>): string {
  const at = clockTime(String(r.at));
  const p = isRecord(r.payload) ? r.payload : {};
  switch (r.event) {
    case 'plugin.home.command':
      return `${at} mqtt  ${String(p.topic)} ${String(p.payload)}`;
    case 'plugin.home.decision':
      // "risky unlock Front Door: confirmed (yes on voice; asked by voice)"
      return `${at} risky ${String(p.what)}: ${String(p.decision)} (${decisionHow(p)}; asked by ${askedBy(String(p.who))})`;
    case 'plugin.home.unreported':
      // "no report from TV after a command: I asked to turn off the TV, but ..."
      return `${at} no report from ${Array.isArray(p.names) ? p.names.join(', ') : ''} after a command: ${String(p.text ?? '')}`;
    case 'plugin.timers.changed':
      return `${at} ${timerChangeText(p)}`;
    case 'plugin.lists.changed':
      return `${at} ${String(p.list)} list ${String(p.change)}: ${JSON.stringify(p.text ?? '')}`;
    case 'plugin.voice.not_understood':
      // "voice not understood (not_command): heard "don't turn on the kitchen lights"; said "Sorry, I didn't catch that.""
      return `${at} voice not understood${typeof p.reason === 'string' ? ` (${p.reason})` : ''}${typeof p.heard === 'string' ? `: heard ${JSON.stringify(p.heard)}` : ''}; said ${JSON.stringify(p.said ?? '')}`;
    case 'log':
      return `${at} ${String(p.level).padEnd(5)} ${String(p.ns).replace(/^homeagent:/, '')}: ${String(p.msg)}${p.err ? ` (${String(p.err)})` : ''}`;
    case 'raw_input':
      // An announcement a plugin raised (a timer going off, a device that did not report back): nobody said it.
      if (p.announcement === true) return `${at} announcement ${String(p.channel ?? '')}: ${JSON.stringify(p.text ?? '')}`;
      // Who spoke, when known (issue 18): `input cli (Anna): "..."`.
      return `${at} input ${String(p.channel ?? '')}${typeof p.user === 'string' ? ` (${p.user})` : ''}: ${JSON.stringify(p.text ?? p.content ?? '')}`;
    case 'output':
      return `${at} reply ${String(p.channel ?? '')} ${String(p.kind ?? '')}: ${JSON.stringify(p.content ?? '')}`;
    case 'error':
      return `${at} ERROR ${String(p.where ?? '')}: ${String(p.message ?? JSON.stringify(p))}`;
    case 'assistant_state':
      return `${at} state ${String(p.state)}`;
    case 'turn.started': {
      const input = isRecord(p.input) ? p.input : {};
      return `${at} turn ${String(p.turn ?? '').slice(0, 8)} started (${String(input.channel ?? input.source ?? '?')})`;
    }
    case 'turn.finished': {
      const outcome = isRecord(p.outcome) ? p.outcome : {};
      return `${at} turn ${String(p.turn ?? '').slice(0, 8)} finished: ${String(p.status ?? '?')}${outcome.kind && outcome.kind !== p.status ? ` (${String(outcome.kind)})` : ''}`;
    }
    case 'stop':
      return `${at} stop by ${String(p.source ?? '?')}${typeof p.cancelled_inputs === 'number' ? `, ${p.cancelled_inputs} queued input${p.cancelled_inputs === 1 ? '' : 's'} dropped` : ''}`;
    default:
      return `${at} ${String(r.event)} ${payloadFields(p)}`;
  }
}

/** An event's payload as `key=value` pairs (strings quoted, objects and long values cut to 60 characters), not a JSON dump. */
function payloadFields(p: Record<string, unknown>): string {
  return Object.entries(p)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => {
      const text = typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return `${k}=${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    })
    .join(' ');
}

/** " — next try in 8 s, 3 restarts" for a plugin the supervisor will restart ('' otherwise). */
function pluginRetry(p: Record<string, unknown>, now: number): string {
  const parts: string[] = [];
  if (typeof p.next_restart_at === 'number') parts.push(`next try in ${Math.max(0, Math.round((p.next_restart_at - now) / 1000))} s`);
  if (Number(p.restarts ?? 0) > 0) parts.push(`${String(p.restarts)} restarts`);
  return parts.length ? ` — ${parts.join(', ')}` : '';
}

/** The `homeagent plugins` table (rows of src/service/app.ts pluginRows), then what is held or refused and why. */
export function pluginsText(rows: Array<Record<string, unknown>>, now: number): string {
  const cells = rows.map((p) => {
    const caps = Array.isArray(p.capabilities) ? (p.capabilities as unknown[]).map(String) : undefined;
    const missing = Array.isArray(p.missing) ? (p.missing as unknown[]).map(String) : [];
    const capText = caps === undefined ? '(all: built in)' : [caps.join(', ') || 'none', missing.length ? `asks also: ${missing.join(', ')}` : ''].filter(Boolean).join('; ');
    return [
      String(p.name),
      String(p.kind ?? '-'),
      String(p.version ?? '-'),
      `${String(p.state)}${p.error ? ` (${String(p.error)})` : ''}${pluginRetry({ next_restart_at: p.next_restart_at }, now)}`,
      String(p.restarts ?? 0),
      p.last_error ? String(p.last_error) : '-',
      `${capText}${p.sandbox ? ` [sandbox: ${String(p.sandbox)}]` : ''}`,
    ];
  });
  const lines = [table(['NAME', 'KIND', 'VERSION', 'STATE', 'RESTARTS', 'LAST ERROR', 'CAPABILITIES'], cells, 60)];
  for (const p of rows) if (p.message && ['held', 'refused', 'skipped'].includes(String(p.state))) lines.push(`${String(p.name)} ${String(p.state)}: ${String(p.message)}`);
  if (rows.some((p) => p.sandbox === 'advisory')) lines.push('sandbox advisory: bubblewrap is not usable here, so process plugins run as the service\'s user and their capabilities are advisory (see homeagent doctor)');
  return lines.join('\n');
}

/**
 * Print `result` of `cmd` (a command name of src/cli/protocol.ts, or 'log' /
 * 'data' for streamed lines) as text, or as one JSON line with `json`.
 * `now`: ms since epoch that clock times and back-offs are relative to.
 */
/**
 * The lines under an `ask` reply: each tool the model used (`  tool NAME
 * ARGS -> RESULT`, the result cut at 200 characters) and each thing the turn
 * did (`  did: mqtt TOPIC PAYLOAD`, a timer or list change; the control
 * plugin's `actions`). Printed whether or not the reply was streamed.
 */
export function askDetails(result: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (Array.isArray(result.tools)) for (const t of result.tools as Array<Record<string, unknown>>) lines.push(`  tool ${String(t.name)} ${JSON.stringify(t.arguments)} -> ${String(t.result).slice(0, 200)}`);
  if (Array.isArray(result.actions)) for (const a of result.actions) lines.push(`  did: ${String(a)}`);
  return lines;
}

export function printResult(cmd: string, result: unknown, json: boolean, out: Out = stdout, now = Date.now()): void {
  if (cmd === 'devices') result = withPercent(result);
  if (json) return out(JSON.stringify(result));
  if (result === null || result === undefined) return;
  switch (cmd) {
    case 'status':
      if (isRecord(result)) return out(statusText(result, now));
      break;
    case 'timers':
      if (Array.isArray(result)) {
        if (result.length === 0) return out('no timers running');
        const rows = (result as Array<Record<string, unknown>>).map((t) => [String(t.name ?? '') || '-', String(t.state), duration(Number(t.remaining_s)), duration(Number(t.duration_s)), String(t.id)]);
        return out(table(['NAME', 'STATE', 'LEFT', 'SET FOR', 'ID'], rows));
      }
      break;
    case 'lists':
      if (isRecord(result)) {
        const lines: string[] = [];
        for (const [list, items] of Object.entries(result)) {
          const open = Array.isArray(items) ? (items as Array<Record<string, unknown>>) : [];
          lines.push(open.length === 0 ? `${list}: (empty)` : `${list}:`);
          for (const i of open) lines.push(`  - ${String(i.text)}`);
        }
        return out(lines.join('\n'));
      }
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
        for (const line of askDetails(result)) out(line);
        return;
      }
      break;
    case 'config.list':
      if (Array.isArray(result)) {
        if (result.length === 0) return out('no setting has a key that starts so (`homeagent config list` lists them all)');
        const rows = (result as Array<Record<string, unknown>>).map((r) => [String(r.key), JSON.stringify(r.value) ?? '', `${String(r.source)}${r.restart ? ', restart' : ''}`]);
        return out(table(['KEY', 'VALUE', 'FROM'], rows, 80) + '\n(FROM: default, stored or env; "restart": read when the service starts. `homeagent config get KEY` for one, `--json` for descriptions)');
      }
      break;
    case 'config.get':
      // The value alone, as JSON (`"auto"`, `4`): what a script reading one setting wants.
      if (isRecord(result)) {
        out(JSON.stringify(result.value));
        if (result.note) process.stderr.write(`note: ${String(result.note)}\n`);
        return;
      }
      break;
    case 'config.set':
      if (isRecord(result)) {
        // The environment overrides what was stored: say what was stored and what is in effect (a newcomer read the env's value as the one set).
        out(result.source === 'env' ? `${String(result.key)}: stored, but ${valueText(result.value)} stays in effect (from the environment)` : `${String(result.key)} is now ${valueText(result.value)}`);
        if (result.note) process.stderr.write(`note: ${String(result.note)}\n`);
        return;
      }
      break;
    case 'config.delete':
      if (isRecord(result)) {
        // A newcomer deleted a key never set and read that a stored value was removed.
        out(`${String(result.deleted)}: ${result.removed === false ? 'no value was stored' : 'the stored value was removed'}${'value' in result ? `; it is now ${valueText(result.value)} (${String(result.source ?? 'default')})` : ''}`);
        if (result.note) process.stderr.write(`note: ${String(result.note)}\n`);
        return;
      }
      break;
    case 'say':
      // Printed once the speech is playing, not when it has played: "said" read as done, and a newcomer's `stop` right
      // after cut what it had called said.
      if (isRecord(result)) return out(`playing on ${String(result.channel)}: ${JSON.stringify(result.said)} (homeagent stop cuts it)`);
      break;
    case 'stop':
      if (isRecord(result)) return out('stopped: the reply was cut, the speaker silenced and waiting inputs dropped');
      break;
    case 'plugins':
      if (Array.isArray(result)) return out(pluginsText(result as Array<Record<string, unknown>>, now));
      break;
    case 'plugins.reload':
      if (isRecord(result)) {
        const list = (k: string) => (Array.isArray(result[k]) && (result[k] as unknown[]).length ? (result[k] as unknown[]).map(String).join(', ') : 'none');
        out(`added: ${list('added')}; changed: ${list('changed')}; removed: ${list('removed')}`);
        for (const f of Array.isArray(result.failed) ? (result.failed as Array<Record<string, unknown>>) : []) out(`FAILED ${String(f.name)}: ${String(f.error)} (the old version, if any, goes on)`);
        if (Array.isArray(result.plugins)) out(pluginsText(result.plugins as Array<Record<string, unknown>>, now));
        return;
      }
      break;
    case 'plugins.install':
      if (isRecord(result)) return out(String(result.message ?? `${String(result.name)}: ${String(result.outcome)}`));
      break;
    case 'plugins.remove':
      if (isRecord(result)) return out(`removed ${String(result.removed)}`);
      break;
    case 'plugins.approve':
    case 'plugins.enable':
    case 'plugins.disable':
    case 'plugins.restart':
      if (isRecord(result)) return out(`${String(result.name)}: ${String(result.disabled ? 'disabled' : result.state)}${result.error ? ` (${String(result.error)})` : ''}${result.message ? ` — ${String(result.message)}` : ''}`);
      break;
    case 'memory.stats':
      if (isRecord(result)) return out(memoryStatsText(result));
      break;
    case 'memory.recall':
      if (Array.isArray(result)) {
        if (result.length === 0) return out('nothing remembered that matches');
        const rows = (result as Array<Record<string, unknown>>).map((m) => [typeof m.score === 'number' ? m.score.toFixed(2) : '-', String(m.kind ?? '?'), typeof m.time === 'number' ? clockTime(m.time, now) : '-', String(m.text ?? '')]);
        return out(table(['SCORE', 'KIND', 'WHEN', 'TEXT'], rows, 100));
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
    case 'webui.link':
      if (isRecord(result)) {
        const lines = [`Open this link once, on the phone or computer to sign in${result.person ? ` (as ${String(result.person)})` : ''}; it works until ${clockTime(Number(result.expires_at), now)}:`, '', `  ${String(result.url)}`, ''];
        if (Array.isArray(result.other_urls) && result.other_urls.length) lines.push('The same link on the box\'s other names and addresses:', ...result.other_urls.map((u) => `  ${String(u)}`), '');
        if (result.fingerprint_sha256) lines.push('The browser warns about the box\'s own (self-signed) certificate. Check once that its SHA-256 fingerprint is', `  ${String(result.fingerprint_sha256)}`, 'then accept it.');
        if (result.note) lines.push(`note: ${String(result.note)}`);
        return out(lines.join('\n'));
      }
      break;
    case 'webui.sessions':
      if (Array.isArray(result)) {
        if (result.length === 0) return out('no WebUI sessions or links (homeagent webui link makes one)');
        const rows = (result as Array<Record<string, unknown>>).map((e) => [String(e.id), String(e.kind), String(e.person ?? '') || '-', clockTime(Number(e.created_at), now), typeof e.last_seen_at === 'number' ? clockTime(e.last_seen_at, now) : '-', clockTime(Number(e.expires_at), now), String(e.label ?? '')]);
        return out(table(['ID', 'KIND', 'PERSON', 'CREATED', 'LAST USED', 'ENDS', 'CLIENT'], rows, 50));
      }
      break;
    case 'webui.revoke':
      if (isRecord(result) && isRecord(result.revoked)) return out(`revoked ${String(result.revoked.kind)} ${String(result.revoked.id)}${result.revoked.person ? ` (${String(result.revoked.person)})` : ''}: it opens nothing from now on`);
      break;
    case 'listen':
      if (isRecord(result) && Array.isArray(result.utterances)) {
        for (const u of result.utterances as Array<Record<string, unknown>>) {
          out(`${String(u.file)}`);
          if (u.status === 'error') {
            out(`  error: ${String(u.error ?? u.reply)}`);
            continue;
          }
          out(`  transcript: ${JSON.stringify(u.transcript)}${u.rejected ? ` (rejected${typeof u.reason === 'string' ? `: ${u.reason}` : ''})` : ''}`);
          // What a refused recording was heard as (the log keeps it at debug only).
          if (typeof u.heard === 'string') out(`  heard: ${JSON.stringify(u.heard)}`);
          // A doubted command asks for a yes, unless nothing is left to do ("The Front Door is already locked."): the reply says which.
          if (Array.isArray(u.unsure_between)) out(`  doubted: could not tell ${u.unsure_between.map((w) => JSON.stringify(w)).join(' from ')}`);
          if (Array.isArray(u.actions)) for (const a of u.actions) out(`  did: ${typeof a === 'string' ? a : JSON.stringify(a)}`);
          out(`  reply: ${JSON.stringify(u.reply)}`);
          // What else the box said meanwhile (a yes/no question it dropped: "OK, I did not unlock the Front Door.").
          const also = Array.isArray(u.spoken) ? u.spoken.filter((t): t is string => typeof t === 'string' && !String(u.reply).includes(t)) : [];
          if (also.length) out(`  also said: ${JSON.stringify(also.join(' '))}`);
          if (typeof u.hint === 'string') out(`  hint: ${u.hint}`);
          if (u.wav) out(`  spoken reply written to ${String(u.wav)}`);
          if (isRecord(u.timings)) out(`  timings: ${timingsText(u.timings)}`);
          // Speech heard after the first utterance was acted on at its pause ("... and lock the front door").
          for (const n of Array.isArray(u.then) ? u.then.filter(isRecord) : []) {
            out(`  then: ${JSON.stringify(n.transcript)}${n.status === 'rejected' ? ` (rejected${typeof n.reason === 'string' ? `: ${n.reason}` : ''})` : ''} -> ${JSON.stringify(n.reply)}`);
            if (typeof n.heard === 'string') out(`    heard: ${JSON.stringify(n.heard)}`);
            if (Array.isArray(n.unsure_between)) out(`    doubted: could not tell ${n.unsure_between.map((w) => JSON.stringify(w)).join(' from ')}`);
          }
        }
        return;
      }
      break;
  }
  out(typeof result === 'string' ? result : JSON.stringify(result, null, 2));
}
