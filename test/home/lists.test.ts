/**
 * The box's shopping list and to-do list (src/plugins/lists): the service
 * API (add without duplicates, remove, complete, read back, kept across a
 * restart in a versioned store) and the LLM tools on the same service.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import path from 'node:path';
import { FakeClock } from '../../src/kernel/clock.js';
import { ListError, ListService, ListsPlugin, LISTS_STORE, itemKey, type ListChange } from '../../src/plugins/lists/index.js';
import { FakeSdk } from '../support/fake-sdk.js';

describe('lists', () => {
  const sdks: FakeSdk[] = [];
  after(() => {
    for (const s of sdks) s.cleanup();
  });

  test('itemKey: case, spaces, plurals', () => {
    assert.equal(itemKey('Apples'), itemKey('apple'));
    assert.equal(itemKey(' Oat  milk. '), itemKey('oat milk'));
    assert.equal(itemKey('tomatoes'), itemKey('tomato'));
    assert.notEqual(itemKey('milk'), itemKey('silk'));
  });

  test('add, no duplicates, remove, complete, read back; kept across a restart', () => {
    const sdk = new FakeSdk({ name: 'lists' });
    sdks.push(sdk);
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const file = path.join(sdk.dataDir, 'lists.db');
    const changes: Array<[ListChange, string]> = [];
    let svc = new ListService({ dbPath: file, clock, onChange: (c, i) => changes.push([c, i.text]) });
    svc.start();
    assert.equal(svc.add('shopping', 'milk').added, true);
    clock.advance(1000);
    svc.add('shopping', 'eggs');
    assert.equal(svc.add('shopping', 'Milk').added, false, 'an open item is not added twice');
    svc.add('todo', 'call the plumber');
    assert.deepEqual(svc.items('shopping').map((i) => i.text), ['milk', 'eggs']);
    assert.equal(svc.remove('shopping', { text: 'egg' })?.text, 'eggs');
    assert.equal(svc.remove('shopping', { text: 'bread' }), undefined);
    svc.stop();

    svc = new ListService({ dbPath: file, clock });
    svc.start();
    assert.deepEqual(svc.items('shopping').map((i) => i.text), ['milk']);
    const done = svc.complete('todo', { text: 'Call the plumber' });
    assert.equal(done?.done, true);
    assert.equal(done?.completed_at, clock.now());
    assert.deepEqual(svc.items('todo'), [], 'a completed to-do is not read back');
    assert.deepEqual(svc.items('todo', { done: true }).map((i) => [i.text, i.done]), [['call the plumber', true]], 'but kept');
    assert.throws(() => svc.add('shopping', '  '), ListError);
    assert.throws(() => svc.add('groceries' as 'shopping', 'x'), (e: unknown) => e instanceof ListError && /unknown list "groceries"/.test(e.message));
    svc.stop();
    assert.deepEqual(changes, [['added', 'milk'], ['added', 'eggs'], ['added', 'call the plumber'], ['removed', 'eggs']]);
    const db = new Database(file, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), LISTS_STORE.version);
    db.close();
  });

  test('the list tool: add, remove, done, items; changes are published', async () => {
    const sdk = new FakeSdk({ name: 'lists' });
    sdks.push(sdk);
    const plugin = new ListsPlugin({ clock: new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0)) });
    plugin.start(sdk);
    assert.deepEqual((await sdk.callTool('list', { action: 'add', list: 'shopping', item: 'bread' })).result, { added: true, already_there: false, item: 'bread' });
    await sdk.callTool('list', { action: 'add', list: 'todo', item: 'water the plants' });
    assert.deepEqual((await sdk.callTool('list', { action: 'items', list: 'shopping' })).result, { list: 'shopping', items: ['bread'] });
    assert.deepEqual((await sdk.callTool('list', { action: 'done', list: 'todo', item: 'water the plants' })).result, { changed: true, item: 'water the plants', done: true });
    assert.equal(((await sdk.callTool('list', { action: 'remove', list: 'shopping', item: 'cheese' })).result as { changed: boolean }).changed, false);
    assert.ok((await sdk.callTool('list', { action: 'add', list: 'pets', item: 'x' })).error, 'an unknown list is refused by the schema');
    assert.match(String(((await sdk.callTool('list', { action: 'add', list: 'shopping' })).error as { message?: string })?.message), /add needs an item/);
    assert.deepEqual(sdk.events('plugin.lists.changed').map((e) => [e.change, e.list, e.text]), [['added', 'shopping', 'bread'], ['added', 'todo', 'water the plants'], ['completed', 'todo', 'water the plants']]);
    plugin.stop();
  });
});
