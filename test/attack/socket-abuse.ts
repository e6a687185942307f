/**
 * Attack: abuse of the maintenance socket (the Unix socket `homeagent`
 * commands use; src/cli/protocol.ts). 200 clients at once each ask for
 * `status`; then requests that are not the protocol: not JSON, JSON of the
 * wrong shape, unknown and prototype-named commands, wrong-typed arguments,
 * binary bytes, a line over the 32 MB request limit, 10,000 requests on one
 * connection, a request cut off by the client, and idle connections held
 * open; after each kind the service must still answer `status`.
 *
 * Figures:
 *  socket_clients_unanswered       of the 200 concurrent clients, those without
 *                                  a `status` answer within 30 s (pass 0)
 *  socket_bad_requests_unanswered  bad requests that got neither an error line
 *                                  with a code nor a close of the connection
 *                                  within 10 s (pass 0); those answered as if
 *                                  valid (a lenient reading) are listed in a note
 *  socket_service_down             times `status` did not answer within 10 s
 *                                  after an abuse, or the process was gone (pass 0)
 */
import net from 'node:net';
import { request } from '../../src/cli/client.js';
import type { Box } from './box.js';
import { exactly, type Figure } from './report.js';
import { startWorld, type Scope } from './world.js';

/** What came back for one raw request. */
interface Outcome {
  /** Response lines received (parsed when JSON). */
  lines: unknown[];
  closedByService: boolean;
  timedOut: boolean;
}

/**
 * Send `bytes` on a new connection and collect what comes back until
 * `expectLines` lines arrived, the service closed the connection, or
 * `timeoutMs` passed. `end` half-closes our side after sending.
 */
function rawRequest(path: string, bytes: Buffer | string, opts: { expectLines?: number; timeoutMs?: number; end?: boolean } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const sock = net.connect(path);
    const lines: unknown[] = [];
    let buf = '';
    let done = false;
    const finish = (o: Partial<Outcome>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ lines, closedByService: false, timedOut: false, ...o });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), opts.timeoutMs ?? 10_000);
    sock.on('connect', () => {
      sock.write(bytes, () => {
        if (opts.end) sock.end();
      });
    });
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push(line);
        }
      }
      if (lines.length >= (opts.expectLines ?? 1)) finish({});
    });
    sock.on('error', () => finish({ closedByService: true }));
    sock.on('end', () => finish({ closedByService: true }));
    sock.on('close', () => finish({ closedByService: true }));
  });
}

/** A response line that is an error with a code (the protocol's answer to a bad request). */
function isTypedError(l: unknown): boolean {
  return !!l && typeof l === 'object' && (l as { type?: unknown }).type === 'error' && typeof (l as { code?: unknown }).code === 'string' && (l as { code: string }).code !== '';
}

async function serviceAnswers(box: Box): Promise<boolean> {
  if (!box.alive()) return false;
  try {
    await request(box.socketPath, 'status', {}, undefined, { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  const { box } = await startWorld(scope, { home: false });
  const sock = box.socketPath;
  let down = 0;
  const downWhy: string[] = [];
  const check = async (after: string): Promise<void> => {
    if (!(await serviceAnswers(box))) {
      down++;
      downWhy.push(`after ${after}${box.alive() ? '' : ` (process exited: ${JSON.stringify(box.exit())})`}`);
    }
  };

  // 200 concurrent clients.
  const t0 = Date.now();
  const results = await Promise.allSettled(Array.from({ length: 200 }, () => request(sock, 'status', {}, undefined, { timeoutMs: 30_000 })));
  const unanswered = results.filter((r) => r.status === 'rejected');
  note(`200 concurrent status requests answered in ${Date.now() - t0} ms (${unanswered.length} not)`);
  await check('200 concurrent clients');

  // Bad requests: each must get an error line with a code, or a close.
  const bad: Array<[string, Buffer | string, { expectLines?: number; end?: boolean }?]> = [
    ['not JSON', 'hello there\n'],
    ['a JSON array', '[1,2,3]\n'],
    ['JSON null', 'null\n'],
    ['a JSON string', '"status"\n'],
    ['no cmd', '{"id":1,"args":{}}\n'],
    ['cmd a number', '{"id":1,"cmd":5,"args":{}}\n'],
    ['unknown cmd', '{"id":1,"cmd":"rm -rf /","args":{}}\n'],
    ['cmd __proto__', '{"id":1,"cmd":"__proto__","args":{}}\n'],
    ['cmd constructor', '{"id":1,"cmd":"constructor","args":{}}\n'],
    ['cmd toString', '{"id":1,"cmd":"toString","args":{}}\n'],
    ['cmd hasOwnProperty', '{"id":1,"cmd":"hasOwnProperty","args":{}}\n'],
    ['args a string', '{"id":1,"cmd":"config.get","args":"x"}\n'],
    ['args null', '{"id":1,"cmd":"config.get","args":null}\n'],
    ['config.get without key', '{"id":1,"cmd":"config.get","args":{}}\n'],
    ['config.get key an object', '{"id":1,"cmd":"config.get","args":{"key":{"a":1}}}\n'],
    ['config.get unknown key', '{"id":1,"cmd":"config.get","args":{"key":"no.such.key"}}\n'],
    ['config.get key __proto__', '{"id":1,"cmd":"config.get","args":{"key":"__proto__"}}\n'],
    ['config.set bad value', '{"id":1,"cmd":"config.set","args":{"key":"core.agent.max_tool_rounds","raw":"-5"}}\n'],
    ['config.set prototype pollution', '{"id":1,"cmd":"config.set","args":{"key":"__proto__.polluted","raw":"1"}}\n'],
    ['ask text a number', '{"id":1,"cmd":"ask","args":{"text":5}}\n'],
    ['ask text empty', '{"id":1,"cmd":"ask","args":{"text":""}}\n'],
    ['memory.recall query an object', '{"id":1,"cmd":"memory.recall","args":{"query":{"$gt":""}}}\n'],
    ['listen files a string', '{"id":1,"cmd":"listen","args":{"files":"x"}}\n'],
    ['listen files [null]', '{"id":1,"cmd":"listen","args":{"files":[null]}}\n'],
    ['id a huge number', '{"id":1e308,"cmd":"nope","args":{}}\n'],
    ['nesting 100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}\n`],
    ['binary bytes', Buffer.concat([Buffer.from([0, 255, 254, 1, 2, 3, 0x80, 0xc3, 0x28]), Buffer.from('\n')])],
    ['invalid UTF-8 in a string', Buffer.concat([Buffer.from('{"id":1,"cmd":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","args":{}}\n')])],
  ];
  let badUnanswered = 0;
  const badWhy: string[] = [];
  const accepted: string[] = [];
  for (const [name, bytes, o] of bad) {
    const r = await rawRequest(sock, bytes, { expectLines: 1, ...o });
    if (!(r.lines.some(isTypedError) || r.closedByService || r.lines.some((l) => (l as { type?: string })?.type === 'end'))) {
      badUnanswered++;
      badWhy.push(`${name}: ${r.timedOut ? 'no answer in 10 s' : JSON.stringify(r.lines).slice(0, 160)}`);
    } else if (!r.lines.some(isTypedError) && !r.closedByService) {
      // Answered as if valid (a lenient reading of the arguments): not a failure of this figure, but said.
      accepted.push(`${name} -> ${JSON.stringify(r.lines[0]).slice(0, 100)}`);
    }
  }
  if (accepted.length) note(`answered as valid requests: ${accepted.join('; ')}`);
  await check('the bad requests');

  // A line over the 32 MB limit: refused with REQUEST_TOO_LARGE and the connection closed, without buffering it all.
  {
    const big = Buffer.alloc(33 * 1024 * 1024, 0x61);
    const r = await rawRequest(sock, big, { timeoutMs: 30_000 });
    if (!(r.lines.some(isTypedError) || r.closedByService)) {
      badUnanswered++;
      badWhy.push(`a 33 MB line: ${r.timedOut ? 'no answer in 30 s' : JSON.stringify(r.lines).slice(0, 160)}`);
    }
    note(`33 MB request line: ${r.lines.length ? JSON.stringify(r.lines[0]).slice(0, 120) : r.closedByService ? 'closed' : 'no answer'}; service RSS now ${box.rssMb().toFixed(0)} MB`);
    await check('a 33 MB request line');
  }

  // 10,000 requests pipelined on one connection: every one answered (ids echoed).
  {
    const n = 10_000;
    const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ id: i + 1, cmd: i % 2 ? 'nope' : 'plugins', args: {} })).join('\n') + '\n';
    const r = await rawRequest(sock, lines, { expectLines: n, timeoutMs: 30_000 });
    const ids = new Set(r.lines.map((l) => (l as { id?: number })?.id));
    const missing = Array.from({ length: n }, (_, i) => i + 1).filter((id) => !ids.has(id)).length;
    if (missing) {
      badUnanswered += missing;
      badWhy.push(`10,000 pipelined requests: ${missing} unanswered${r.closedByService ? ' (connection closed)' : ''}`);
    }
    await check('10,000 pipelined requests');
  }

  // A request cut off by the client (half a line, then the client closes), and 100 connections left idle.
  {
    const cut = await rawRequest(sock, '{"id":1,"cmd":"sta', { end: true, timeoutMs: 3000 });
    void cut; // nothing is owed to a request that never ended; the check is that the service goes on
    const idle: net.Socket[] = [];
    for (let i = 0; i < 100; i++) idle.push(net.connect(sock));
    scope.defer(() => idle.forEach((s) => s.destroy()));
    await check('a cut-off request and 100 idle connections');
    for (const s of idle) s.destroy();
  }

  // A `logs` follower that never reads while the service logs (back-pressure must not grow the service without bound).
  {
    const follower = net.connect(sock);
    scope.defer(() => follower.destroy());
    follower.write('{"id":1,"cmd":"logs","args":{}}\n');
    follower.pause();
    const rss0 = box.rssMb();
    await Promise.allSettled(Array.from({ length: 50 }, (_, i) => request(sock, 'ask', { text: `what time is it ${i}` }, undefined, { timeoutMs: 30_000 })));
    note(`a logs follower that never reads, 50 asks: service RSS ${rss0.toFixed(0)} -> ${box.rssMb().toFixed(0)} MB`);
    follower.destroy();
    await check('a logs follower that never reads');
  }

  return [
    exactly('socket_clients_unanswered', unanswered.length, 'clients', 0, unanswered.length ? String((unanswered[0] as PromiseRejectedResult).reason) : undefined),
    exactly('socket_bad_requests_unanswered', badUnanswered, 'requests', 0, badWhy.length ? badWhy.slice(0, 12).join('\n') : undefined),
    exactly('socket_service_down', down, 'times', 0, downWhy.length ? downWhy.join('\n') : undefined),
  ];
}
