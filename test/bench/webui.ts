/**
 * WebUI benchmark (issue 16 "Bench lines"): the running service with the LLM
 * test server, Debian's Chromium (playwright-core) on the Talk page.
 * - webui.page_load_ms: a signed-in browser reloads the page (its files
 *   revalidated, as `Cache-Control: no-cache` asks) until the Talk page is
 *   drawn; each of the 5 in a fresh browser context (p50 / max).
 * - webui.first_load_kb: what a first load (nothing cached) transferred, compressed.
 * - webui.first_token_ms: the kernel has the reply's first token (its
 *   `llm.delta` on the bus) → that text is in the page's DOM (p50 / p95 of
 *   10 asks; both clocks are this machine's wall clock).
 * - webui.day_heap_growth_mb (issue 16 "a page left open for a day does not
 *   grow the service's memory"): the service's memory (V8 heap with external
 *   and array buffers, after a full GC) grown over DAY_TURNS turns (each a
 *   reply streamed token by token, about a busy household's day) with an
 *   Activity page (per-token deltas) and a Devices page open all along;
 *   `_no_pages` the same number of turns before the pages opened (what the
 *   turns themselves leave: memory stores, caches), `_per_page_kb` the
 *   difference per page. webui.day_activity_backlog: events the Activity
 *   stream keeps at the end (bounded: ACTIVITY_BACKLOG).
 */
import { createHash, createPublicKey } from 'node:crypto';
import { chromium } from 'playwright-core';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startWebBox } from '../webui/helpers.js';

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export async function run(): Promise<void> {
  const box = await startWebBox();
  const spki = createHash('sha256').update(createPublicKey(box.app.webui.certificate!.cert).export({ type: 'spki', format: 'der' })).digest('base64');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', `--ignore-certificate-errors-spki-list=${spki}`] });
  try {
    const loads: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const link = await box.link();
      const url = link.url.replace(/^https:\/\/[^/]+/, box.base);
      await page.goto(url);
      await page.waitForURL(/\/#\/talk$/);
      const t0 = Date.now();
      await page.reload();
      await page.getByRole('button', { name: 'Send' }).waitFor();
      loads.push(Date.now() - t0);
      if (i === 0) {
        const c2 = await browser.newContext();
        const p2 = await c2.newPage();
        await p2.goto(box.base + '/');
        await p2.getByText('You are not signed in').waitFor();
        bytes = await p2.evaluate(() => [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].reduce((n, e) => n + (e as PerformanceResourceTiming).transferSize, 0));
        await c2.close();
      }
      await context.close();
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    const link = await box.link();
    await page.goto(link.url.replace(/^https:\/\/[^/]+/, box.base));
    await page.waitForURL(/\/#\/talk$/);
    const firsts: number[] = [];
    // Replies keyed on the question, so another caller of the model (memory's summaries) cannot take one meant for an ask.
    box.llm.script((r) => {
      const last = String(r.body?.messages?.at(-1)?.content ?? '');
      const ask = /say (Reply\d+)/.exec(last);
      if (ask) return { content: `${ask[1]} and then some more words to follow.`, tokensPerSecond: 50 };
      const q = /question (\d+): /.exec(last);
      if (q) return { content: `Answer number ${q[1]}: the kitchen light is on and the front door is locked, nothing else changed.`, tokensPerSecond: 2000 };
      return { content: 'Summary: earlier talk.' };
    });
    for (let i = 0; i < 10; i++) {
      const word = `Reply${i}`;
      let kernelAt = 0;
      const off = box.app.kernel.bus.subscribe('bench', 'llm.delta', () => {
        if (!kernelAt) kernelAt = Date.now();
      });
      const seen = page.evaluate(
        (w) =>
          new Promise<number>((resolve) => {
            const obs = new MutationObserver(() => {
              const el = [...document.querySelectorAll('.msg.box .text')].pop();
              if (el?.textContent?.includes(w)) {
                obs.disconnect();
                resolve(Date.now());
              }
            });
            obs.observe(document.body, { childList: true, subtree: true, characterData: true });
          }),
        word,
      );
      await page.getByLabel('Message').fill(`say ${word}`);
      await page.getByRole('button', { name: 'Send' }).click();
      const domAt = await seen;
      off();
      firsts.push(domAt - kernelAt);
      await page.locator(`.msg.box[data-status="done"]`).nth(i).waitFor();
    }
    await context.close();
    console.log(`webui.page_load_ms_p50: ${percentile(loads, 50)} ms`);
    console.log(`webui.page_load_ms_max: ${Math.max(...loads)} ms`);
    console.log(`webui.first_load_kb: ${(bytes / 1024).toFixed(1)} KB`);
    console.log(`webui.first_token_ms_p50: ${percentile(firsts, 50)} ms`);
    console.log(`webui.first_token_ms_p95: ${percentile(firsts, 95)} ms`);
    await dayWithPages(box, browser);
  } finally {
    await browser.close();
    await box.close();
  }
}

/** Turns in the day phase (each half): a busy household's day of talking to the box. */
const DAY_TURNS = 400;

/** The service's memory after a full GC (bytes): V8 heap, external and array buffers; the LLM test server (in this process) first forgets the requests it recorded. */
function settledMemory(box: Awaited<ReturnType<typeof startWebBox>>): number {
  box.llm.requests.length = 0;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** DAY_TURNS turns without pages, then DAY_TURNS more with an Activity and a Devices page open (see module comment). */
async function dayWithPages(box: Awaited<ReturnType<typeof startWebBox>>, browser: import('playwright-core').Browser): Promise<void> {
  const turns = async (from: number): Promise<void> => {
    for (let i = from; i < from + DAY_TURNS; i++) {
      await box.app.kernel.injectInput('bench', 'webui', `question ${i}: what is going on at home`);
    }
  };
  await turns(0); // warm-up: caches and stores reach their working size
  const m0 = settledMemory(box);
  await turns(DAY_TURNS);
  const m1 = settledMemory(box);
  const context = await browser.newContext();
  const pages = [];
  for (const hash of ['#/activity', '#/devices']) {
    const page = await context.newPage();
    const link = await box.link();
    await page.goto(link.url.replace(/^https:\/\/[^/]+/, box.base));
    await page.waitForURL(/\/#\/talk$/);
    await page.goto(`${box.base}/${hash}`);
    pages.push(page);
  }
  // The Activity page first draws the backlog (ACTIVITY_BACKLOG events): on a loaded machine that took over 30 s once.
  await pages[0]!.getByText('live').first().waitFor({ timeout: 120_000 });
  const m2 = settledMemory(box);
  await turns(2 * DAY_TURNS);
  // The Activity page shows the last turn: it read the stream to the end.
  await pages[0]!.getByText(`question ${3 * DAY_TURNS - 1}`).first().waitFor({ timeout: 60_000 });
  const m3 = settledMemory(box);
  const clients = box.app.webui.eventClients;
  await context.close();
  const mb = (b: number): string => (b / 1024 / 1024).toFixed(2);
  const withPages = m3 - m2;
  const without = m1 - m0;
  console.log(`webui.day_heap_growth_mb: ${mb(withPages)} MB (${DAY_TURNS} turns with an Activity page and a Devices page open; ${clients} streams open at the end)`);
  console.log(`webui.day_heap_growth_mb_no_pages: ${mb(without)} MB (${DAY_TURNS} turns before the pages opened)`);
  console.log(`webui.day_heap_growth_per_page_kb: ${((withPages - without) / 1024 / pages.length).toFixed(1)} KB (with pages minus without, per page)`);
  console.log(`webui.day_activity_backlog: ${box.app.webui.activityBacklog} events (kept for a page that opens later; at most ACTIVITY_BACKLOG)`);
}
