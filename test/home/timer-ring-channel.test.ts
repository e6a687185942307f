/**
 * Where an expired timer rings: on the channel it was set from when that
 * channel lasts (the console), on plugin.timers.channel when it reaches only a
 * caller while it waits (`homeagent ask`'s `cli`, OutputChannelOptions.perRequest). A tester's `ask` client was handed another caller's timer ring.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { Cap } from '../../src/kernel/output-types.js';
import { TimersPlugin } from '../../src/plugins/timers/index.js';
import { FakeSdk } from '../support/fake-sdk.js';

const sdks: FakeSdk[] = [];
after(() => {
  for (const s of sdks) s.cleanup();
});

test('a timer set over a per-request channel rings on the box; one set on a lasting channel rings there', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const sdk = new FakeSdk({ name: 'timers' });
  sdks.push(sdk);
  sdk.registerOutputChannel('cli', Cap.Text | Cap.Stream, 'ask callers', () => undefined, { perRequest: true });
  sdk.registerOutputChannel('console', Cap.Text | Cap.Stream, 'the console', () => undefined);
  const plugin = new TimersPlugin({ clock });
  plugin.start(sdk);
  await sdk.callTool('timer', { action: 'set', seconds: 10, name: 'tea' }, { channel: 'cli' });
  await sdk.callTool('timer', { action: 'set', seconds: 20, name: 'eggs' }, { channel: 'console' });
  clock.advance(30_000);
  assert.deepEqual(
    sdk.interrupts.map((i) => [i.text.match(/tea|eggs/)?.[0], i.channel]),
    [['tea', 'speaker'], ['eggs', 'console']],
  );
  plugin.stop();
});
