/**
 * A name in free words when no device is known at all (the home not yet
 * announced after a start, or a box without MQTT devices): no claim that the
 * device does not exist; the input goes to the LLM. Found by typing
 * "turn on the kitchen light and lock the front door" into a freshly
 * started demo box: "I don't know a device called the front door".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalIntents } from '../../src/home/local-intents.js';
import { matchIntent } from '../../src/intents/index.js';
import { FakeClock } from '../../src/kernel/clock.js';
import type { DeviceRegistry } from '../../src/home/registry.js';
import type { HomeController } from '../../src/home/controller.js';
import type { ConfirmationGate } from '../../src/home/confirm.js';
import { silentLogger } from '../support/quiet.js';

test('with no device known, a free name is left to the LLM, never "I don\'t know a device called ..."', async () => {
  const registry = { entities: () => [], view: () => undefined, onChange: () => () => undefined } as unknown as DeviceRegistry;
  const intents = new LocalIntents({
    registry,
    controller: {} as HomeController,
    gate: {} as ConfirmationGate,
    timers: () => undefined,
    clock: new FakeClock(0),
    timeZone: () => 'UTC',
    log: silentLogger,
  });
  const match = matchIntent('lock the front door', { entities: [], areas: [] }, 'en');
  assert.equal(match?.slots.name_free, 1, 'only the free-name sentence fits an empty home');
  assert.equal(await intents.handle(match!, { who: 'test', channel: 'console' }), undefined);
  const parts = [
    { match: matchIntent('what time is it', { entities: [], areas: [] }, 'en')!, text: 'what time is it' },
    { match: match!, text: 'lock the front door' },
  ];
  assert.equal(await intents.handleAll(parts, { who: 'test', channel: 'console' }), 'I didn\'t get "lock the front door". So I did neither.');
});
