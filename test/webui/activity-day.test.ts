/**
 * Issue 16 "a page left open for a day does not grow the service's memory":
 * a day in fake time (keep-alives every 15 s, 3000 turns each streamed in
 * 20 pieces) to an Activity page that reads everything and to a Devices
 * page. What the service holds for them stays bounded: the backlog for a
 * later page, the turns' privacy states, and nothing left queued per page.
 * (`npm run bench -- webui` measures the memory itself: webui.day_heap_growth_mb.)
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import { test } from 'node:test';
import { ACTIVITY_BACKLOG, EventStreams, TURNS_KEPT } from '../../src/plugins/webui/activity-stream.js';
import type { InputMessage } from '../../src/kernel/turn-types.js';

/** A page that reads everything it is sent (nothing waits in its socket). */
class ReadingPage extends EventEmitter {
  bytes = 0;
  writes = 0;
  writableLength = 0;
  writeHead(): this {
    return this;
  }
  write(chunk: string): boolean {
    this.bytes += Buffer.byteLength(chunk);
    this.writes++;
    return true;
  }
  end(): void {
    this.emit('close');
  }
  destroy(): void {
    this.emit('close');
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('a day of turns and keep-alives to an open Activity page and Devices page keeps what the service holds bounded', async () => {
  let now = Date.UTC(2026, 11, 1, 0, 0, 0);
  const streams = new EventStreams(() => now);
  const activity = new ReadingPage();
  const devices = new ReadingPage();
  const req = new EventEmitter() as unknown as http.IncomingMessage;
  streams.open(req, activity as unknown as http.ServerResponse, { session: 's1', person: 'Anna', backlog: true, deltas: true, stream: 'activity' });
  streams.open(req, devices as unknown as http.ServerResponse, { session: 's1', person: 'Anna', backlog: false, deltas: false, stream: 'devices' });
  const day = 24 * 3_600_000;
  const turns = 3000;
  const step = day / turns;
  let nextKeepAlive = now + 15_000;
  for (let i = 0; i < turns; i++) {
    const id = `turn-${i}`;
    const input: InputMessage = { id, source: 'voice', channel: 'speaker', text: `question ${i}: is the kitchen light on`, user: i % 3 ? 'Anna' : 'Bob' } as InputMessage;
    streams.activity('raw_input', input);
    streams.activity('turn.started', { type: 'turn.started', turn: id, input });
    for (let k = 0; k < 20; k++) streams.activity('llm.delta', { type: 'llm.delta', turn: id, round: 1, kind: 'content', text: `piece ${k} ` });
    streams.activity('output', { type: 'output', turn: id, channel: 'speaker', kind: 'full', content: `Answer ${i}: yes, it is on.` });
    streams.device('plugin.home.state', { id: 'kitchen_light', name: 'Kitchen Light', component: 'light', area: 'Kitchen', available: true, state: { state: i % 2 ? 'ON' : 'OFF' } });
    now += step;
    while (nextKeepAlive <= now) {
      streams.keepAlive();
      nextKeepAlive += 15_000;
    }
    if (i % 50 === 0) await tick();
  }
  await tick();
  assert.equal(streams.size, 2, 'both pages are still open after a day');
  assert.equal(streams.backlogSize, ACTIVITY_BACKLOG, 'the backlog for a later page is bounded');
  assert.ok(streams.turnsTracked <= TURNS_KEPT, `${streams.turnsTracked} turns' privacy states kept (at most ${TURNS_KEPT})`);
  assert.ok(activity.bytes > turns * 20 * 20, `the Activity page was sent every piece (${activity.bytes} bytes)`);
  assert.ok(devices.writes > 0 && devices.bytes > turns * 30, 'the Devices page was sent the states');
  // Nothing is left waiting for either page: a later event goes out on the next turn of the event loop, alone.
  const before = activity.writes;
  const bytes = activity.bytes;
  streams.keepAlive();
  await tick();
  assert.equal(activity.writes, before + 1);
  assert.equal(activity.bytes - bytes, ': keep-alive\n\n'.length, 'only the keep-alive was queued: nothing was left behind');
});
