/**
 * Attack: a 20 MB reply (issue 14 "Limits"). The LLM test server answers one
 * question with 20 MB of text, streamed as Ollama does (NDJSON lines of about
 * 1,000 characters each, written in 64 KB socket writes). The service's
 * memory is read from /proc/<pid>/status: VmHWM (peak resident set) reset
 * just before the question (writing 5 to /proc/<pid>/clear_refs), and VmRSS
 * sampled every 20 ms; the figure is the larger of the two. The stores'
 * growth is measured on disk (database, -wal and -shm files) after a clean
 * stop of the service.
 *
 * Figures:
 *  huge_reply_rss_mb             peak RSS of the service through the reply (pass < 300)
 *  huge_reply_runlog_growth_mb   growth of runlog.db (pass < 5)
 *  huge_reply_memory_growth_mb   growth of memory.db (pass < 5)
 */
import path from 'node:path';
import { dbSizeMb } from './box.js';
import { below, type Figure } from './report.js';
import { startWorld, type Scope } from './world.js';

const TOTAL_CHARS = 20 * 1024 * 1024;
const CHUNK_CHARS = 1000;

/** The 20 MB answer as Ollama's /api/chat NDJSON stream. */
function hugeStream(): string {
  const sentence = 'The quick brown fox jumps over the lazy dog again and again. ';
  const content = sentence.repeat(Math.ceil(CHUNK_CHARS / sentence.length)).slice(0, CHUNK_CHARS);
  const line = `${JSON.stringify({ model: 'qwen2.5:3b', created_at: '2026-01-01T00:00:00.000000000Z', message: { role: 'assistant', content }, done: false })}\n`;
  const n = Math.ceil(TOTAL_CHARS / CHUNK_CHARS);
  const done = `${JSON.stringify({ model: 'qwen2.5:3b', created_at: '2026-01-01T00:00:00.000000000Z', message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, eval_count: n * 200 })}\n`;
  return line.repeat(n) + done;
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  const { box, llm } = await startWorld(scope, { home: false });
  const body = hugeStream();
  llm.script((req) => {
    const msgs = req.body?.messages ?? [];
    const last = msgs[msgs.length - 1];
    if (last?.role === 'user' && typeof last.content === 'string' && last.content.includes('[huge]') && last.content.length < 200) {
      return { raw: body, contentType: 'application/x-ndjson', chunkBytes: 65536, splitDelayMs: 0 };
    }
    return { content: 'Fine.' };
  });
  // Warm up (first turn loads what a turn needs), then the baseline.
  await box.call('ask', { text: 'hello there' }, 60_000);
  const runlog = path.join(box.dataDir, 'runlog.db');
  const memory = path.join(box.dataDir, 'memory.db');
  const before = { rss: box.rssMb(), runlog: dbSizeMb(runlog), memory: dbSizeMb(memory) };
  const reset = box.resetPeak();
  let sampled = box.rssMb();
  const sampler = setInterval(() => {
    const r = box.rssMb();
    if (r > sampled) sampled = r;
  }, 20);
  scope.defer(() => clearInterval(sampler));
  const t0 = Date.now();
  let reply = '';
  let status = '';
  try {
    const r = (await box.call('ask', { text: 'Tell me a long story [huge]' }, 90_000)) as { reply?: string; status?: string };
    reply = String(r.reply ?? '');
    status = String(r.status ?? '');
  } catch (err) {
    status = `no answer (${err instanceof Error ? err.message : String(err)})`;
  }
  const took = Date.now() - t0;
  // A moment for what the turn writes after it answered (memory window, run log), sampled all the while.
  await box.call('ask', { text: 'hello again' }, 60_000).catch(() => undefined);
  clearInterval(sampler);
  const hwm = box.peakRssMb();
  const rssAfter = box.rssMb();
  const peak = Math.max(reset && Number.isFinite(hwm) ? hwm : 0, sampled);
  const alive = box.alive();
  await box.stop();
  const after = { runlog: dbSizeMb(runlog), memory: dbSizeMb(memory) };
  note(`20 MB reply: status ${status}, ${reply.length} characters kept, ${took} ms; RSS ${before.rss.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB (VmHWM ${reset ? hwm.toFixed(0) : 'not reset'}, sampled ${sampled.toFixed(0)}), ${rssAfter.toFixed(0)} MB after${alive ? '' : '; the service died'}`);
  note(`reply ends: ${JSON.stringify(reply.slice(-160))}`);
  const chatRequests = llm.chatRequests().length;
  note(`LLM requests: ${chatRequests}`);
  return [
    below('huge_reply_rss_mb', peak, 'MB', 300, alive ? undefined : 'the service died during the reply'),
    below('huge_reply_runlog_growth_mb', after.runlog - before.runlog, 'MB', 5),
    below('huge_reply_memory_growth_mb', after.memory - before.memory, 'MB', 5),
  ];
}
