/**
 * The WebUI's access rules in time (issue 16 "Access"), on the FakeClock:
 * a link opens nothing after plugin.webui.link_ttl_s, a session unused for
 * plugin.webui.session_days ends, sign-in attempts are counted per address
 * and minute; the store survives a restart and is versioned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../src/kernel/clock.js';
import { AuthStore, LoginLimiter } from '../../src/plugins/webui/auth.js';
import { StoreTooNewError } from '../../src/kernel/store-version.js';

const DAY = 24 * 3600 * 1000;

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-webui-auth-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a link opens nothing once its time is over; an unused session ends after its days', () => {
  withDir((dir) => {
    const clock = new FakeClock();
    const store = new AuthStore(dir, clock, () => 30 * DAY);
    const late = store.createLink(600_000);
    clock.advance(600_001);
    assert.equal(store.redeemLink(late.token, 'browser'), undefined);
    assert.deepEqual(store.list(), [], 'the expired link is gone from the list too');

    const link = store.createLink(600_000, 'Alice');
    clock.advance(599_000);
    const opened = store.redeemLink(link.token, 'browser', 'Mozilla/5.0')!;
    assert.equal(opened.session.person, 'Alice');
    // Used now and then, it lasts; 30 days unused, it ends.
    clock.advance(29 * DAY);
    assert.equal(store.authenticate(opened.token)?.id, opened.session.id);
    clock.advance(30 * DAY - 1);
    assert.ok(store.authenticate(opened.token));
    clock.advance(30 * DAY + 1);
    assert.equal(store.authenticate(opened.token), undefined);
    assert.deepEqual(store.list(), []);
  });
});

test('sessions survive a restart of the service; the store is versioned and a newer one is refused', () => {
  withDir((dir) => {
    const clock = new FakeClock();
    const a = new AuthStore(dir, clock, () => DAY);
    const opened = a.redeemLink(a.createLink(60_000, 'Bob').token, 'token')!;
    const again = new AuthStore(dir, clock, () => DAY);
    assert.equal(again.authenticate(opened.token)?.person, 'Bob');
    const file = path.join(dir, 'sessions.json');
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).schema_version, 1);
    writeFileSync(file, JSON.stringify({ schema_version: 2, auth: {} }));
    assert.throws(() => new AuthStore(dir, clock, () => DAY), (err: unknown) => err instanceof StoreTooNewError && err.store === 'webui-sessions');
  });
});

test('sign-in attempts: at most N per address and minute, counted again the next minute', () => {
  const clock = new FakeClock();
  const limiter = new LoginLimiter(clock, () => 3);
  for (let i = 0; i < 3; i++) assert.deepEqual(limiter.attempt('10.0.0.5'), { ok: true });
  clock.advance(20_000);
  assert.deepEqual(limiter.attempt('10.0.0.5'), { ok: false, retry_after_s: 40 });
  assert.deepEqual(limiter.attempt('10.0.0.6'), { ok: true }, 'another address has its own count');
  clock.advance(40_000);
  assert.deepEqual(limiter.attempt('10.0.0.5'), { ok: true });
});
