/**
 * Attack: broker restarts (issue 14 "Reconnect"). With the fixture home
 * known, Mosquitto (persistence on, as Debian's is) is stopped for 3 s and
 * then for 8 s, and started again on the same port. The broker is "back" at
 * the first TCP connection this script makes to it (probed every 20 ms); the
 * service is back at the time of its own log line saying it connected (pino
 * `time`), or, without one, when `homeagent status` first shows the broker
 * connected (polled every 50 ms). During each outage the service is asked
 * "set the bed light to 40 percent": its refusal must say what it was.
 *
 * Figures:
 *  reconnect_ms            the longest time from broker back to service
 *                          connected, over the outages (pass < 2500)
 *  outage_reply_unnamed    refusals during an outage that do not name the
 *                          device and the value (pass 0)
 */
import net from 'node:net';
import type { Box } from './box.js';
import { below, exactly, type Figure } from './report.js';
import { pause, startWorld, type Scope } from './world.js';

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean): void => {
      s.removeAllListeners();
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(500, () => done(false));
  });
}

async function brokerConnected(box: Box): Promise<boolean> {
  try {
    return (await box.status()).broker.connected === true;
  } catch {
    return false;
  }
}

/** When the service logged that it (re)connected to the broker at or after `since` (ms epoch), if it did. */
function loggedConnectAt(box: Box, since: number): { time: number; msg: string } | undefined {
  for (const l of box.logs()) {
    if (typeof l.time !== 'number' || l.time < since || l.level < 30) continue;
    const msg = String(l.msg ?? '');
    if (/\b(re)?connected\b/i.test(msg) && !/dis|lost|not |refused|fail|down/i.test(msg) && /broker|mqtt/i.test(`${msg} ${String(l.ns ?? '')}`)) return { time: l.time, msg };
  }
  return undefined;
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  const { box, broker } = await startWorld(scope, { mosquittoPersistence: true });
  const times: number[] = [];
  const unnamed: string[] = [];
  for (const outageMs of [3000, 8000]) {
    await broker.kill();
    const downAt = Date.now();
    const deadline = Date.now() + 15_000;
    while (await brokerConnected(box)) {
      if (Date.now() > deadline) throw new Error('the service still says the broker is connected 15 s after it was stopped');
      await pause(50);
    }
    const seenDown = Date.now() - downAt;
    // A command during the outage: refused, and the refusal says what it was.
    const r = (await box.call('ask', { text: 'set the bed light to 40 percent' }, 30_000)) as { reply?: string };
    const reply = String(r.reply ?? '');
    if (!(/bed light/i.test(reply) && /40/.test(reply))) unnamed.push(JSON.stringify(reply));
    const left = outageMs - (Date.now() - downAt);
    if (left > 0) await pause(left);
    // Start it again on the same port; "back" is the first connection it accepts.
    const starting = broker.start();
    let backAt = 0;
    while (!backAt) {
      if (await canConnect(broker.port)) backAt = Date.now();
      else await pause(20);
    }
    await starting;
    let polledAt = 0;
    const end = Date.now() + 40_000;
    while (!polledAt) {
      if (await brokerConnected(box)) polledAt = Date.now();
      else if (Date.now() > end) break;
      else await pause(50);
    }
    const logged = loggedConnectAt(box, backAt - 50);
    const at = logged?.time ?? polledAt;
    const ms = at ? Math.max(0, at - backAt) : 40_000;
    times.push(ms);
    note(`outage ${outageMs} ms (service saw it after ${seenDown} ms): reconnected ${at ? `${ms} ms` : 'not within 40 s'} after the broker was back (${logged ? `from its log line ${JSON.stringify(logged.msg.slice(0, 60))}` : 'from status'}${polledAt ? `; status showed it after ${polledAt - backAt} ms` : ''}); outage reply ${JSON.stringify(reply.slice(0, 120))}`);
  }
  return [
    below('reconnect_ms', Math.max(...times), 'ms', 2500),
    exactly('outage_reply_unnamed', unnamed.length, 'replies', 0, unnamed.length ? unnamed.join('\n') : undefined),
  ];
}
