/**
 * WebUI pages watching the Activity page from a process of their own, as
 * the phones and laptops of a household do: Playwright's traffic with the
 * browser (every page's protocol messages) then runs on this child's event
 * loop, not on the loop of the service being measured. Used by the stop
 * bench (issue 16: ten pages watching Activity while the box talks keep
 * `stop.llm_abort_p99` and `stop.speaker_p99` under 10 ms).
 *
 * The parent gives the one-time sign-in links (one per page, each already
 * pointing at the service's address) and the certificate's public-key hash
 * (certificateSpki); the child opens one browser context per link, signs
 * in, opens Activity and reports `ready`. It closes the browser and exits
 * on `close`, or when the parent goes away.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

type ParentMessage = { type: 'open'; links: string[]; spki: string; background: boolean } | { type: 'close' };
type ChildMessage = { type: 'ready'; pages: number } | { type: 'error'; message: string };

/** Pages open in a child process (startActivityPages). */
export interface ActivityPages {
  /** How many pages watch Activity. */
  pages: number;
  /** Close the browser and end the child; resolves on its exit. */
  close(): Promise<void>;
}

/**
 * Fork a child that opens one Chromium page per sign-in link in `links`
 * (URLs on the service's WebUI address) and shows Activity on each;
 * resolves once every page shows it. `spki`: the WebUI certificate's
 * public-key hash; `background`: Chromium at the lowest CPU priority
 * (launchChromium's BACKGROUND_CHROMIUM). Rejects when the child fails or
 * takes over 120 s.
 */
export async function startActivityPages(links: string[], spki: string, background: boolean): Promise<ActivityPages> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pages = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the activity pages did not open within 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`the activity pages process exited (${code}) before the pages opened`)));
    child.on('message', (m: ChildMessage) => {
      clearTimeout(timer);
      if (m.type === 'ready') resolve(m.pages);
      else reject(new Error(`activity pages process: ${m.message}`));
    });
    child.send({ type: 'open', links, spki, background } satisfies ParentMessage);
  });
  return {
    pages,
    close: async () => {
      if (child.exitCode === null && child.connected) child.send({ type: 'close' } satisfies ParentMessage);
      const late = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(late);
    },
  };
}

async function childMain(): Promise<void> {
  const { launchChromiumTrusting, BROWSER_CPU } = await import('../webui/helpers.js');
  let browser: import('playwright-core').Browser | undefined;
  const send = (m: ChildMessage): void => void process.send?.(m);
  const finish = async (): Promise<void> => {
    await browser?.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('disconnect', () => void finish());
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'close') {
      void finish();
      return;
    }
    void (async () => {
      try {
        browser = await launchChromiumTrusting(m.spki, { background: m.background });
        for (const link of m.links) {
          const page = await (await browser.newContext()).newPage();
          await page.goto(link);
          await page.waitForURL(/\/#\/talk$/);
          await page.getByRole('link', { name: 'Activity' }).click();
          await page.locator('.activity').waitFor();
        }
        // Signed in and watching: from now on this process only keeps the browser open. On a real
        // deployment nothing drives the household's pages; in the background, the protocol messages
        // the pages still send it do not take the service's cores either.
        if (m.background) backgroundSelf(BROWSER_CPU);
        send({ type: 'ready', pages: m.links.length });
      } catch (err) {
        send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
        await finish();
      }
    })();
  });
}

/** This process (every thread) at the lowest CPU priority: SCHED_IDLE and nice 19, on `cpu` when given, as BACKGROUND_CHROMIUM runs the browser. */
function backgroundSelf(cpu: number | undefined): void {
  execFileSync('chrt', ['-a', '--idle', '-p', '0', String(process.pid)]);
  if (cpu !== undefined) execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
  os.setPriority(19);
}

if (process.argv.includes('--child')) void childMain();
