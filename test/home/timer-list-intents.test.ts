/**
 * Timers and lists by text through the real matcher and the local intent path
 * (no LLM), with a FakeClock, English and Chinese: every timer operation
 * (start, cancel, cancel all, pause, resume, add and take off time, status,
 * named timers), "which timer?" with two timers and its answer (never both),
 * and the shopping and to-do lists (add, remove, read back, complete).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { TimersPlugin } from '../../src/plugins/timers/index.js';
import { ListsPlugin } from '../../src/plugins/lists/index.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { startRig, type Rig } from './harness.js';
import { matchIntent } from '../../src/intents/index.js';
import type { IntentMatch } from '../../src/intents/types.js';

describe('timers and lists through the matcher and the local intents', () => {
  let rig: Rig;
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const timers = new TimersPlugin({ clock, dbPath: ':memory:' });
  const lists = new ListsPlugin({ clock, dbPath: ':memory:' });
  const pluginSdk = new FakeSdk({ name: 'timers' });
  const say = async (text: string): Promise<string | undefined> => (await rig.sdk.runInput(text)).response;
  /** Both lists emptied, ticked-off items too. */
  const emptyLists = (): void => {
    for (const l of ['shopping', 'todo'] as const) for (const i of [...(lists.service?.items(l, { done: true }) ?? []), ...(lists.service?.items(l) ?? [])]) lists.service?.remove(l, { id: i.id });
  };
  const running = (): Array<[string | undefined, string, number]> => (timers.service?.status() ?? []).map((t) => [t.name, t.state, t.remaining_s]);

  before(async () => {
    timers.start(pluginSdk);
    lists.start(pluginSdk);
    rig = await startRig({ plugin: { timers, lists, clock, matchIntent: undefined }, settings: { 'plugin.home.confirm_timeout_ms': 15000 } });
  });
  after(async () => {
    await rig.close();
    timers.stop();
    lists.stop();
    pluginSdk.cleanup();
  });
  beforeEach(() => {
    timers.service?.cancel({ all: true });
  });

  test('start (named or not), status, pause, resume, add and take off time, cancel, cancel all', async () => {
    assert.equal(await say('set a pasta timer for 10 minutes'), 'Pasta timer set for 10 minutes.');
    assert.equal(await say('set a timer for 5 minutes'), 'Timer set for 5 minutes.');
    clock.advance(60_000);
    assert.equal(await say('how much time is left on the pasta timer'), 'The pasta timer has 9 minutes left.');
    assert.equal(await say('how much time is left'), 'You have 2 timers: the timer for 5 minutes has 4 minutes left and the pasta timer has 9 minutes left.');
    // Typed forms a newcomer's went to the LLM with: the same answers.
    assert.equal(await say('what timers are running'), 'You have 2 timers: the timer for 5 minutes has 4 minutes left and the pasta timer has 9 minutes left.');
    assert.equal(await say('how long on the pasta timer'), 'The pasta timer has 9 minutes left.');
    assert.equal(await say('pause the pasta timer'), 'Paused the pasta timer with 9 minutes left.');
    clock.advance(120_000);
    assert.equal(await say('pause the pasta timer'), 'The pasta timer is already paused.');
    assert.equal(await say('add 5 minutes to the pasta timer'), 'Added 5 minutes to the pasta timer: 14 minutes left.');
    assert.equal(await say('resume the pasta timer'), 'Resumed the pasta timer: 14 minutes left.');
    assert.equal(await say('take two minutes off the pasta timer'), 'Took 2 minutes off the pasta timer: 12 minutes left.');
    assert.equal(await say('take 20 minutes off the 5 minute timer'), "The timer for 5 minutes has only 2 minutes left, so I can't take off 20 minutes.");
    assert.deepEqual(running(), [[undefined, 'running', 120], ['pasta', 'running', 720]]);
    assert.equal(await say('cancel the 5 minute timer'), 'Cancelled the timer for 5 minutes.');
    assert.equal(await say('cancel the eggs timer'), 'There is no eggs timer.');
    assert.equal(await say('cancel the timer'), 'Cancelled the pasta timer.', 'one timer: "the timer" is that one');
    // Typed units in short, and "set timer" without "a ... for".
    assert.equal(await say('set timer 3 min'), 'Timer set for 3 minutes.');
    assert.equal(await say('cancel the timer'), 'Cancelled the timer for 3 minutes.');
    assert.equal(await say('cancel the timer'), 'There is no timer running.');
    await say('set a timer for 1 minute');
    await say('set a tea timer for 3 minutes');
    assert.equal(await say('cancel all timers'), 'Cancelled 2 timers.');
    assert.deepEqual(running(), []);
  });

  test('two timers: "cancel the timer" asks which, the answer picks one, the other runs on', async () => {
    await say('set a pasta timer for 10 minutes');
    await say('set a timer for 4 minutes');
    const asked = await rig.sdk.runInput('cancel the timer');
    assert.equal(asked.response, 'Which timer do you mean: the timer for 4 minutes or the pasta timer?');
    assert.deepEqual(asked.response_meta, { expects_reply: true }, 'the voice box listens for the answer');
    assert.equal(running().length, 2, 'nothing cancelled while asking');
    assert.equal(await say('the pasta one'), 'Cancelled the pasta timer.');
    assert.deepEqual(running(), [[undefined, 'running', 240]]);
    assert.equal((await rig.sdk.runInput('how much time is left')).response_meta, undefined, 'an answer that asks nothing');

    await say('set an egg timer for 10 minutes');
    assert.equal(await say('add 2 minutes to the timer'), 'Which timer do you mean: the timer for 4 minutes or the egg timer?');
    assert.equal(await say('the 4 minute one'), 'Added 2 minutes to the timer for 4 minutes: 6 minutes left.');
    assert.deepEqual(running(), [[undefined, 'running', 360], ['egg', 'running', 600]]);

    assert.match(await say('pause the timer') ?? '', /^Which timer/);
    assert.equal(await say('the second one'), 'Paused the egg timer with 10 minutes left.');
    assert.deepEqual(running(), [[undefined, 'running', 360], ['egg', 'paused', 600]]);
    assert.equal(await say('pause the timer'), 'Paused the timer for 4 minutes with 6 minutes left.', 'only one is running: no question');
  });

  test('a doubted timer command (the recogniser\'s unsure_between) asks for a yes first, as a doubted device command does: nothing changes before it; no is no; one that would change nothing just says so', async () => {
    const heard = async (text: string): Promise<{ response?: string; response_meta?: Record<string, unknown> }> => {
      const m = matchIntent(text, rig.plugin.registry!.vocabulary(), 'en')!;
      const intent: IntentMatch = { ...m, unsure_between: ['i', 'another word'] };
      return rig.sdk.runInput(text, { channel: 'speaker', meta: { utterance_id: 'utt_t', stt: { engine: 'pocketsphinx', confidence: 0.9, intent }, trigger: 'wake' } });
    };
    const start = await heard('set a timer for 5 minutes');
    assert.equal(start.response, 'Do you really want to set a timer for 5 minutes? Please say yes or no.');
    assert.deepEqual(start.response_meta, { confirmation: true }, 'a yes/no question: the voice box listens for the answer');
    assert.deepEqual(running(), [], 'no timer before the yes');
    assert.equal((await rig.sdk.runInput('yes', { channel: 'speaker' })).response, 'Timer set for 5 minutes.');
    assert.deepEqual(running(), [[undefined, 'running', 300]]);
    assert.match((await heard('cancel the timer')).response ?? '', /^Do you really want to cancel the timer\?/);
    assert.match((await rig.sdk.runInput('no', { channel: 'speaker' })).response ?? '', /did not cancel the timer/);
    assert.deepEqual(running(), [[undefined, 'running', 300]], 'a no cancels nothing');
    assert.match((await heard('pause the pasta timer')).response ?? '', /no pasta timer/i, 'no such timer: said so, nothing asked');
    assert.equal((await heard('how much time is left')).response, 'The timer for 5 minutes has 5 minutes left.', 'a question is answered');
  });

  test('a doubted timer command opens no "which timer?" or "for how long?" (its answer would act with no yes), and a yes acts on the timer the question was about (a tester\'s)', async () => {
    const heard = async (text: string): Promise<string | undefined> => {
      const m = matchIntent(text, rig.plugin.registry!.vocabulary(), 'en')!;
      return (await rig.sdk.runInput(text, { channel: 'speaker', meta: { utterance_id: 'utt_t', stt: { engine: 'pocketsphinx', confidence: 0.9, intent: { ...m, unsure_between: ['i', 'another word'] } }, trigger: 'wake' } })).response;
    };
    await say('set a pasta timer for 10 minutes');
    await say('set a timer for 4 minutes');
    // "i cancelled the timer" with two timers running: no "which timer?", so "the first one" cancels nothing.
    assert.equal(await heard('cancel the timer'), "Sorry, I'm not sure what I heard, so I did nothing. Please say it again.");
    assert.notEqual(await say('the first one'), 'Cancelled the timer for 4 minutes.');
    assert.equal(running().length, 2, 'both run on');
    assert.equal(await heard('add 5 minutes to the timer'), "Sorry, I'm not sure what I heard, so I did nothing. Please say it again.");
    assert.equal(await heard('set a timer'), "Sorry, I'm not sure what I heard, so I did nothing. Please say it again.", 'no "for how long?"');
    assert.equal(running().length, 2);
    // "cancel the pasta timer?" asked; the pasta timer is cancelled elsewhere and another started: the yes cancels nothing.
    assert.match((await heard('cancel the pasta timer')) ?? '', /^Do you really want to cancel the pasta timer\?/);
    timers.service?.cancel({ name: 'pasta' });
    await say('set a pasta timer for 15 minutes');
    assert.equal((await rig.sdk.runInput('yes', { channel: 'speaker' })).response, 'The timer I asked about has changed since, so I did nothing.');
    assert.deepEqual(running().map(([n]) => n ?? '').sort(), ['', 'pasta']);
    // "cancel all timers?" asked with two; a third started meanwhile runs on after the yes.
    assert.match((await heard('cancel all timers')) ?? '', /^Do you really want to cancel all timers\?/);
    await say('set an egg timer for 3 minutes');
    assert.equal((await rig.sdk.runInput('yes', { channel: 'speaker' })).response, 'Cancelled 2 timers.');
    assert.deepEqual(running().map(([n]) => n), ['egg']);
    // A doubted command drops an open "which timer?" as any command does (a second tester's "the pasta one" cancelled
    // the pasta timer right after the box said it did nothing).
    await say('set a pasta timer for 10 minutes');
    assert.match((await say('cancel the timer')) ?? '', /^Which timer do you mean/);
    assert.equal(await heard('pause the timer'), "Sorry, I'm not sure what I heard, so I did nothing. Please say it again.");
    assert.notEqual(await say('the pasta one'), 'Cancelled the pasta timer.');
    assert.deepEqual(running().map(([n]) => n).sort(), ['egg', 'pasta']);
    // Nothing to change: said so, not asked.
    timers.service?.cancel({ all: true });
    assert.equal(await heard('cancel all timers'), 'There is no timer running.');
  });

  test('an answer that fits neither asks again; something else said, or too late, drops the question; never both', async () => {
    await say('set a pasta timer for 10 minutes');
    await say('set a rice timer for 10 minutes');
    assert.equal(await say('cancel the 10 minute timer'), 'Which timer do you mean: the pasta timer or the rice timer?');
    assert.equal(await say('the bread one'), 'That is not one of them. Which timer do you mean: the pasta timer or the rice timer?');
    assert.equal(await say('the 10 minute one'), 'Which timer do you mean: the pasta timer or the rice timer?', 'still both: asked again, not both cancelled');
    assert.equal(running().length, 2);
    assert.match(await say('what time is it') ?? '', /^It is /);
    assert.equal(await say('the rice one'), undefined, 'the question was dropped: the answer is left to the LLM');
    assert.equal(running().length, 2);
    assert.match(await say('stop the timer') ?? '', /^Which timer/);
    clock.advance(16_000);
    assert.equal(await say('the rice one'), undefined, 'too late: nothing is cancelled');
    assert.deepEqual(running().map((t) => t[0]), ['pasta', 'rice']);
    assert.match(await say('cancel the timer') ?? '', /^Which timer/);
    assert.equal(await say('cancel the rice timer'), 'Cancelled the rice timer.', 'the full command answers too');
    assert.deepEqual(running().map((t) => t[0]), ['pasta']);
  });

  test('"set a timer" asks for how long; the length said next starts it (English and Chinese); something else said, another channel, or too late starts nothing', async () => {
    const turn = await rig.sdk.runInput('set a timer');
    assert.equal(turn.response, 'For how long?');
    assert.deepEqual(turn.response_meta, { expects_reply: true }, 'the voice box listens for the answer without the wake word');
    assert.deepEqual(running(), []);
    assert.equal(await say('5 minutes'), 'Timer set for 5 minutes.');
    assert.deepEqual(running(), [[undefined, 'running', 300]]);
    assert.equal(await say('10 minutes'), undefined, 'answered once: a second length is no answer (the LLM has it)');
    assert.equal(running().length, 1);
    await say('set a timer');
    assert.equal(await say('for an hour and a half'), 'Timer set for 1 hour and 30 minutes.');
    await say('set a timer');
    assert.match(await say('what time is it') ?? '', /^It is /);
    assert.equal(await say('2 minutes'), undefined, 'something else was said: the question was dropped');
    await say('set a timer');
    assert.equal((await rig.sdk.runInput('2 minutes', { channel: 'webui' })).response, undefined, 'asked on another channel: not its answer');
    clock.advance(16_000);
    assert.equal(await say('2 minutes'), undefined, 'too late: nothing starts');
    assert.equal(await say('要定多长时间'), undefined);
    assert.equal(await say('设一个计时器'), '要定多长时间？');
    assert.equal(await say('五分钟'), '好的，5分钟的计时器开始了。');
    assert.deepEqual((timers.service?.status() ?? []).map((t) => t.duration_s).sort((a, b) => a - b), [300, 300, 5400], 'the three answered: 5 minutes, an hour and a half, 五分钟');
  });

  test('two unnamed timers of the same length are told apart by what is left, then by position', async () => {
    await say('set a timer for 5 minutes');
    clock.advance(60_000);
    await say('set a timer for 5 minutes');
    assert.equal(await say('cancel the timer'), 'Which timer do you mean: the timer for 5 minutes with 4 minutes left or the timer for 5 minutes with 5 minutes left?');
    assert.equal(await say('the first one'), 'Cancelled the timer for 5 minutes.');
    assert.deepEqual(running(), [[undefined, 'running', 300]]);
    await say('set a timer for 5 minutes');
    assert.equal(await say('pause the timer'), 'Which timer do you mean: the first timer for 5 minutes or the second timer for 5 minutes?');
    assert.match(await say('the last one') ?? '', /^Paused the timer for 5 minutes/);
    assert.deepEqual(running().map((t) => t[1]).sort(), ['paused', 'running']);
  });

  test('Chinese: named timer, pause, add time, status, which one, cancel all', async () => {
    assert.equal(await say('设一个10分钟的意面计时器'), '好的，意面计时器开始了，10分钟。');
    assert.equal(await say('设一个3分钟的计时器'), '好的，3分钟的计时器开始了。');
    assert.equal(await say('暂停意面计时器'), '已暂停意面计时器，还剩10分钟。');
    assert.equal(await say('给意面计时器加5分钟'), '已给意面计时器加了5分钟，还剩15分钟。');
    assert.equal(await say('继续意面计时器'), '意面计时器继续计时，还剩15分钟。');
    assert.equal(await say('意面计时器还剩多久'), '意面计时器还剩15分钟。');
    assert.equal(await say('取消计时器'), '你说的是哪个计时器：3分钟的计时器还是意面计时器？');
    assert.equal(await say('意面那个'), '已取消意面计时器。');
    assert.deepEqual(running(), [[undefined, 'running', 180]]);
    assert.equal(await say('把计时器减1分钟'), '已给3分钟的计时器减了1分钟，还剩2分钟。');
    assert.equal(await say('取消所有计时器'), '已取消1个计时器。');
  });

  test('lists: add, read back, remove, complete a to-do (English and Chinese)', async () => {
    assert.equal(await say("what's on my shopping list"), 'Your shopping list is empty.');
    assert.equal(await say('add milk to the shopping list'), 'Added milk to your shopping list.');
    assert.equal(await say('put eggs on my shopping list'), 'Added eggs to your shopping list.');
    assert.equal(await say('add milk to my shopping list'), 'Milk is already on your shopping list.');
    assert.equal(await say("what's on my shopping list"), 'Your shopping list has 2 items: milk and eggs.');
    assert.equal(await say('take milk off the shopping list'), 'Removed milk from your shopping list.');
    assert.equal(await say('remove bread from the shopping list'), 'Bread is not on your shopping list.');
    assert.equal(await say('add call the plumber to my to do list'), 'Added call the plumber to your to-do list.');
    assert.equal(await say('mark call the plumber as done'), 'Ticked off call the plumber on your to-do list.');
    assert.equal(await say("what's on my to do list"), 'Your to-do list is empty.');
    assert.equal(await say('把牛奶加到购物清单'), '已把牛奶加到购物清单。');
    assert.equal(await say('购物清单里有什么'), '购物清单上有2项：eggs和牛奶。');
    assert.equal(await say('把牛奶从购物清单里删掉'), '已把牛奶从购物清单删掉。');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['eggs']);
    assert.deepEqual(lists.service?.items('todo', { done: true }).map((i) => [i.text, i.done]), [['call the plumber', true]]);
    assert.deepEqual(rig.sim.commands, [], 'no device was commanded');
  });

  test('lists: items joined by "and" are items of their own when each is a known item; otherwise the words are one item', async () => {
    emptyLists();
    // A tester's "add eggs and bread" was one item "eggs and bread".
    assert.equal(await say('add eggs and bread to my shopping list'), 'Added eggs and bread to your shopping list.');
    assert.equal(await say('put milk and toilet paper and bread on the shopping list'), 'Added milk and toilet paper to your shopping list. Bread is already on your shopping list.');
    assert.equal(await say('add mac and cheese to my shopping list'), 'Added mac and cheese to your shopping list.');
    assert.equal(await say('add fish oil and eggs to my shopping list'), 'Added fish oil and eggs to your shopping list.', 'two known words with no "and" between them may be one item');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['eggs', 'bread', 'milk', 'toilet paper', 'mac and cheese', 'fish oil and eggs']);
    // What is on the list counts as known: "mac and cheese" is one item there now.
    assert.equal(await say('take milk and mac and cheese off the shopping list'), 'Removed milk and mac and cheese from your shopping list.');
    assert.equal(await say('remove eggs and butter from my shopping list'), 'Removed eggs from your shopping list. Butter is not on your shopping list.');
    assert.equal(await say('add call mom and pay the bills to my to do list'), 'Added call mom and pay the bills to your to-do list.');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['bread', 'toilet paper', 'fish oil and eggs']);
    assert.deepEqual(lists.service?.items('todo').map((i) => i.text), ['call mom and pay the bills']);
  });

  test('lists: typed commas separate shopping items whatever they are; a to-do stays one, commas and all; singular and plural of a known item are alike', async () => {
    emptyLists();
    // A tester's commas were dropped: "eggs, bread and milk" became one item "eggs bread and milk".
    assert.equal(await say('add eggs, bread and milk to my shopping list'), 'Added eggs, bread and milk to your shopping list.');
    // The part after the last comma is split as without commas: "mac and cheese" stays one item.
    assert.equal(await say('add butter, mac and cheese to my shopping list'), 'Added butter and mac and cheese to your shopping list.');
    // Singular forms of known items split too (a tester's "egg and bread" was one item).
    assert.equal(await say('add apple and tomato to my shopping list'), 'Added apple and tomato to your shopping list.');
    assert.equal(await say('remove egg, milk from my shopping list'), 'Removed eggs and milk from your shopping list.');
    // An article is no part of the item (a newcomer's "add an egg" with eggs on the list added "an egg").
    assert.equal(await say('add an apple to my shopping list'), 'Apple is already on your shopping list.');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['bread', 'butter', 'mac and cheese', 'apple', 'tomato']);
    // A comma outside the item changes nothing.
    assert.equal(await say('please, add salt to my shopping list'), 'Added salt to your shopping list.');
    // Chinese: 、 and ，, and on the shopping list 和 (a tester's "鸡蛋和面包" was one item); 和 opening a word stays.
    assert.equal(await say('把鸡蛋、面包和牛奶加到购物清单'), '已把鸡蛋、面包和牛奶加到购物清单。');
    assert.equal(await say('把和牛和土豆加到购物清单'), '已把和牛和土豆加到购物清单。');
    assert.equal(await say('把面包，酸奶加到购物清单'), '已把酸奶加到购物清单。面包已经在购物清单上了。');
    assert.equal(await say('把跟小王和小李吃饭加到待办事项'), '已把跟小王和小李吃饭加到待办事项。');
    assert.equal(await say('把给妈妈打电话，交房租加到待办事项'), '已把给妈妈打电话，交房租加到待办事项。', 'a to-do is one item, commas and all');
    assert.equal(await say('把牛奶、香蕉从购物清单里删掉'), '已把牛奶从购物清单删掉。购物清单上没有香蕉。');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text).slice(-5), ['鸡蛋', '面包', '和牛', '土豆', '酸奶']);
    assert.ok(lists.service?.items('todo').some((i) => i.text === '跟小王和小李吃饭'));
    emptyLists();
    // A to-do is often a sentence with commas: one to-do (a tester's "email Bob, Alice and Carol about the party" was cut in two).
    assert.equal(await say('add email Bob, Alice and Carol about the party to my to do list'), 'Added email bob, alice and carol about the party to your to-do list.');
    // Numbers keep their commas; an "and" next to a comma is no item (a tester's "1,000 screws" became "1" and "0 screws").
    assert.equal(await say('add 1,000 screws, juice and, water to my shopping list'), 'Added 1000 screws, juice and water to your shopping list.');
    // A comma before the sentence is no separator of items, and one item too long changes nothing at all.
    assert.equal(await say('please, add yogurt, cereal to my shopping list'), 'Added yogurt and cereal to your shopping list.');
    assert.equal(await say(`add sugar, ${'x'.repeat(201)} to my shopping list`), 'An item is at most 200 characters (one here has 201), so nothing was changed.');
    assert.ok(!lists.service?.items('shopping').some((i) => i.text === 'sugar'), 'sugar was not added');
    // Sixteen items with commas: each its own (a tester's became one item from about sixteen on).
    const many = ['eggs', 'bread', 'milk', 'butter', 'cheese', 'coffee', 'tea', 'sugar', 'flour', 'rice', 'pasta', 'apples', 'bananas', 'oranges', 'tomatoes', 'potatoes'];
    assert.match((await say(`add ${many.slice(0, -1).join(', ')} and ${many.at(-1)} to my shopping list`)) ?? '', /^Added .*potatoes to your shopping list\./);
    for (const x of many) assert.ok(lists.service?.items('shopping').some((i) => i.text === x), x);
    assert.equal(await say('add garlic, and, carrots to my shopping list'), 'Added garlic and carrots to your shopping list.');
    // Commas outside the items, polite words and articles inside the slot (a tester's became one item, or items "please", "the").
    emptyLists();
    assert.equal(await say('add salt, sugar to my shopping list, please'), 'Added salt and sugar to your shopping list.');
    assert.equal(await say('could you, add rice, beans to my shopping list'), 'Added rice and beans to your shopping list.');
    assert.equal(await say('add milk please to my shopping list'), 'Added milk to your shopping list.');
    assert.equal(await say('add apples, please to my shopping list'), 'Added apples to your shopping list.');
    assert.equal(await say('add 2,5 kg flour to my shopping list'), 'Added 2.5 kg flour to your shopping list.');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['salt', 'sugar', 'rice', 'beans', 'milk', 'apples', '2.5 kg flour']);
    // A yes empties what the question counted: an item added in the same breath, or meanwhile, stays.
    assert.equal(await say('clear my shopping list and add tea to my shopping list'), 'Added tea to your shopping list. Do you really want to remove all 7 items from your shopping list? Please say yes or no.');
    assert.equal(await say('yes'), 'Removed all 7 items from your shopping list.');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['tea']);
    assert.match((await say('remove all from my shopping list')) ?? '', /^Do you really want to remove all 1 item from your shopping list\?/);
    await lists.service?.add('shopping', 'jam');
    assert.equal(await say('yes'), 'Removed all 1 item from your shopping list.');
    assert.deepEqual(lists.service?.items('shopping').map((i) => i.text), ['jam'], 'jam, added while the question waited, stays');
    emptyLists();
    assert.equal(await say('add garlic, carrots and onions to my shopping list'), 'Added garlic, carrots and onions to your shopping list.');
    assert.equal(await say('add call the plumber to my to do list'), 'Added call the plumber to your to-do list.');
    // A plural item is "are" (a newcomer read "Bananas is not on ...").
    assert.equal(await say('remove plums from my shopping list'), 'Plums are not on your shopping list.');
    assert.equal(await say('remove hummus from my shopping list'), 'Hummus is not on your shopping list.');
    assert.equal(await say('add carrots to my shopping list'), 'Carrots are already on your shopping list.');
    // Emptying a list asks first (a newcomer's "remove all items from the shopping list" was "All items is not on ...").
    const n = lists.service?.items('shopping').length ?? 0;
    assert.ok(n > 2);
    assert.equal(await say('remove all items from the shopping list'), `Do you really want to remove all ${n} items from your shopping list? Please say yes or no.`);
    assert.equal(await say('no'), `OK, I did not remove all ${n} items from your shopping list.`);
    assert.equal(lists.service?.items('shopping').length, n);
    assert.match((await say('clear my shopping list')) ?? '', /^Do you really want to remove all/);
    assert.equal(await say('yes'), `Removed all ${n} items from your shopping list.`);
    assert.equal(lists.service?.items('shopping').length, 0);
    assert.equal(await say('empty the shopping list'), 'Your shopping list is already empty.');
    const todos = lists.service?.items('todo').length ?? 0;
    assert.ok(todos > 0);
    assert.equal(await say('清空待办事项'), `确定要清空待办事项（${todos}项）吗？请说是或不。`);
    assert.equal(await say('是'), `已清空待办事项（${todos}项）。`);
    assert.equal(await say('把待办事项清空'), '待办事项已经是空的。');
    assert.equal(await say('把酱油,醋和盐加到购物清单'), '已把酱油、醋和盐加到购物清单。');
  });
});
