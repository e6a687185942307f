/**
 * Human-readable printing of maintenance command results (`--json` prints
 * the raw JSON instead).
 */

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Print `result` of `cmd` to stdout. */
export function printResult(cmd: string, result: unknown, json: boolean): void {
  const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : s + '\n');
  if (json) return out(JSON.stringify(result));
  if (result === null || result === undefined) return;
  switch (cmd) {
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
        for (const r of result as Array<Record<string, unknown>>) out(`${String(r.key)} = ${JSON.stringify(r.value)}  [${String(r.type)}, ${String(r.source)}]  ${String(r.description)}`);
        return;
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
      if (isRecord(result)) return out(`${String(result.at)} ${String(result.event)} ${JSON.stringify(result.payload)}`);
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
