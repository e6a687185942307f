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
 */
import { createHash, createPublicKey } from 'node:crypto';
import { chromium } from 'playwright-core';
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
    for (let i = 0; i < 10; i++) {
      const word = `Reply${i}`;
      box.llm.enqueue({ content: `${word} and then some more words to follow.`, tokensPerSecond: 50 });
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
  } finally {
    await browser.close();
    await box.close();
  }
}
