/**
 * Chinese (Mandarin, simplified) intent sentence templates for the local
 * matcher. Same intent names and slots as the English set (Home Assistant's
 * intents, sentences/zh-cn for the phrasing: 打开/关闭, 把…打开, 现在几点).
 * Text is matched character by character after numerals become digits
 * ("三十分钟" -> "30分钟"), so templates are written the same way people type.
 * No speech grammar is built from these: the Debian acoustic model is English.
 */
import type { TemplateSet } from './template-syntax.js';
import { COLOURS_ZH } from './builtin-lists.js';
import { NAME_FREE } from './templates-en.js';

const ON_OFF_DOMAINS = ['light', 'switch', 'fan', 'media_player', 'climate', 'cover', 'input_boolean'];

/** A Chinese length of time whose slots are `${p}hours`, `${p}minutes`, `${p}seconds`. */
function zhDuration(p: string): string {
  return `({${p}hours:1-99}[个](小时|钟头)[{${p}minutes:1-59}分[钟]][{${p}seconds:1-59}秒[钟]]|{${p}minutes:1-999}分钟[{${p}seconds:1-59}秒[钟]]|{${p}seconds:1-999}秒[钟]|{${p}minutes:zh_half})`;
}

/**
 * Device sentences with free words for the name (NAME_FREE; src/home/local-intents.ts places them by the
 * resolver's rules). Only the command forms ordinary speech rarely takes: 把…打开/关掉/锁上/解锁/调到 …%, 锁上…/解锁…,
 * and "…锁上了吗". A tester's "打开思路", "关闭通知" and "商店现在开着吗" were taken for devices by the verb-first on/off
 * forms and the open/closed question, which are left to the named sentences and the LLM.
 */
const ZH_FREE_NAME_SENTENCES: TemplateSet['intents'] = [
  { intent: 'HassTurnOn', slots: { [NAME_FREE]: 1 }, sentences: ['<please>把{name:any_name}(打开|开启)<once>'] },
  { intent: 'HassTurnOff', slots: { [NAME_FREE]: 1 }, sentences: ['<please>把{name:any_name}(关掉|关闭|关上)<once>'] },
  { intent: 'HassTurnOn', slots: { [NAME_FREE]: 1, domain: 'lock' }, sentences: ['<please>把{name:any_name}(锁上|锁好)<once>', '<please>(锁上|锁好){name:any_name}'] },
  { intent: 'HassTurnOff', slots: { [NAME_FREE]: 1, domain: 'lock' }, sentences: ['<please>把{name:any_name}(解锁|开锁)<once>', '<please>(解锁|开锁){name:any_name}'] },
  { intent: 'HassLightSet', slots: { [NAME_FREE]: 1, domain: 'light' }, sentences: ['<please>把{name:any_name}[的亮度]<set_to>{brightness:0-100}%'] },
  { intent: 'HassGetState', slots: { [NAME_FREE]: 1, domain: 'lock' }, sentences: ['{name:any_name}锁(上|好)了(吗|没有|没)'] },
];

/** Chinese templates (language 'zh'). */
export const TEMPLATES_ZH: TemplateSet = {
  language: 'zh',
  rules: {
    please: '[请|帮我|麻烦|给我|请帮我]',
    open: '(打开|开启|开)',
    close: '(关掉|关闭|关上|关)',
    once: '[一下|吧]',
    light: '(灯|灯光|电灯|照明)',
    all: '[所有|全部]',
    timer: '(定时器|计时器|倒计时)',
    // A length of time: slots hours / minutes / seconds (the matcher adds them up into `seconds`).
    dur: zhDuration(''),
    // The length a timer was started with, to say which timer ("10分钟的计时器"): start_hours / ... -> start_seconds.
    sdur: zhDuration('start_'),
    // Which timer: a name ("意面计时器"), the length it was set for, or just "the timer".
    tref: '[我的|那个|这个][{timer_name}|<sdur>[的]]<timer>',
    tcancel: '(取消|停止|关掉|关闭|删除|清除)',
    set_to: '(调到|调成|调为|设为|设置为|设成|设置成|调至|设置到)',
    shop: '购物(清单|单|列表)',
    todo: '(待办|待办事项|待办清单|待办事项清单|任务清单|待办列表)',
  },
  lists: {
    zh_half: { values: [{ in: '半小时', out: 30 }, { in: '半个小时', out: 30 }, { in: '半个钟头', out: 30 }] },
    color_zh: { values: COLOURS_ZH },
    lock_done: { values: [{ in: '锁上', out: 'locked' }, { in: '锁好', out: 'locked' }, { in: '锁', out: 'locked' }] },
    location: { wildcard: true },
    item: { wildcard: true, maxWords: 200 },
    timer_name: { wildcard: true },
    // A device name the home does not have (ZH_FREE_NAME_SENTENCES): answered "我不知道叫…的设备", never the nearest device.
    // Never a character of a negation, a question or a wish ("不要把厨房灯调到50%", "iPhone怎么解锁", "商店现在开着吗" were
    // taken for names by a tester): Chinese has no spaces, so a free name would swallow them.
    any_name: { wildcard: true, stopWords: ['和', '然后', '请', '不', '别', '没', '吗', '么', '怎', '想', '要', '还', '呢', '吧', '是', '的', '在', '你', '我', '他', '她'] },
    ordinal: { values: [{ in: '第1个', out: 1 }, { in: '第2个', out: 2 }, { in: '第3个', out: 3 }, { in: '最后1个', out: -1 }, { in: '最后那个', out: -1 }] },
  },
  intents: [
    {
      intent: 'HassTurnOn',
      slots: { domain: 'light' },
      sentences: [
        '<please>[把]{area}[的]<all>[的]<light>[都|全]<open><once>',
        '<please><open>{area}[的]<all>[的]<light>',
      ],
    },
    {
      intent: 'HassTurnOff',
      slots: { domain: 'light' },
      sentences: [
        '<please>[把]{area}[的]<all>[的]<light>[都|全]<close><once>',
        '<please><close>{area}[的]<all>[的]<light>',
      ],
    },
    // "The light" with no room is the one light it fits or asks which, as English "turn on the light" does; "all the
    // lights" are every light (a newcomer's 把灯打开 and 打开所有的灯 were answered "I don't know a device called 灯").
    { intent: 'HassTurnOn', slots: { domain: 'light', device: 'light' }, sentences: ['<please>把<light><open><once>', '<please><open><light>'] },
    { intent: 'HassTurnOff', slots: { domain: 'light', device: 'light' }, sentences: ['<please>把<light><close><once>', '<please><close><light>'] },
    { intent: 'HassTurnOn', slots: { domain: 'light' }, sentences: ['<please>把(所有|全部)[的]<light>[都|全]<open><once>', '<please><open>(所有|全部)[的]<light>'] },
    { intent: 'HassTurnOff', slots: { domain: 'light' }, sentences: ['<please>把(所有|全部)[的]<light>[都|全]<close><once>', '<please><close>(所有|全部)[的]<light>'] },
    { intent: 'HassTurnOn', requires: { domains: ON_OFF_DOMAINS }, sentences: ['<please>[把]{name}<open><once>', '<please><open><once>{name}'] },
    { intent: 'HassTurnOff', requires: { domains: ON_OFF_DOMAINS }, sentences: ['<please>[把]{name}<close><once>', '<please><close><once>{name}'] },
    { intent: 'HassTurnOn', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['<please>[把]{name}(锁上|锁好)<once>', '<please>(锁上|锁好|锁)<once>{name}'] },
    { intent: 'HassTurnOff', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['<please>[把]{name}(解锁|开锁)<once>', '<please>(解锁|开锁)<once>{name}'] },
    { intent: 'HassTurnOn', requires: { domains: ['scene', 'script', 'button'] }, sentences: ['<please>(启动|激活|运行|执行|按下|按|开启|打开)<once>{name}[场景|脚本|按钮]'] },
    {
      intent: 'HassLightSet',
      requires: { domains: ['light'] },
      sentences: [
        '<please>[把]{name}[的]亮度<set_to>{brightness:0-100}[%]',
        '<please>[把]{name}<set_to>{brightness:0-100}%[的亮度]',
        '<please>[把]{name}<set_to>{color:color_zh}[的]',
      ],
    },
    {
      intent: 'HassLightSet',
      slots: { domain: 'light' },
      sentences: ['<please>[把]{area}[的]<light>[的]亮度<set_to>{brightness:0-100}[%]', '<please>[把]{area}[的]<light><set_to>{color:color_zh}[的]'],
    },
    { intent: 'HassGetState', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['{name}{state:lock_done}了(吗|没有|没)', '{name}[是不是|有没有]锁(上|好)了[吗]'] },
    { intent: 'HassGetState', requires: { domains: ON_OFF_DOMAINS }, sentences: ['{name}[是]开着[的]吗', '{name}[是]关着[的]吗', '{name}开了(吗|没有)', '{name}[是][什么]状态'] },
    // A room's lights by the room ("把厨房灯调到50%", "厨房灯开着吗"), as the English set has them: a newcomer's went to
    // the LLM, whose offline reply then said device control still worked.
    { intent: 'HassLightSet', slots: { domain: 'light' }, sentences: ['<please>[把]{area}[的]<all>[的]<light>[都|全]<set_to>{brightness:0-100}%'] },
    { intent: 'HassGetState', slots: { domain: 'light' }, sentences: ['{area}[的]<light>[是]开着[的]吗', '{area}[的]<light>[是]关着[的]吗', '{area}[的]<light>开了(吗|没有)'] },
    // The device sentences with a name the home lacks ("把前门锁上" with no 前门): "我不知道叫前门的设备", not the LLM.
    // Ranked below every sentence with one of the home's names (a wildcard costs more), and marked NAME_FREE, as in English.
    ...ZH_FREE_NAME_SENTENCES,
    {
      intent: 'HassClimateGetTemperature',
      sentences: ['[现在][室内|屋里|家里|{area}[的]][的]温度[是]多少[度]', '[现在][室内|屋里|家里|{area}][是]几度', '[现在][室内|屋里|家里|{area}]多少度'],
    },
    {
      intent: 'HassClimateGetTemperature',
      requires: { domains: ['climate'], sensorClasses: ['temperature'] },
      sentences: ['{name}[的]温度[是]多少[度]', '{name}[现在][是]几度'],
    },
    {
      intent: 'HassClimateSetTemperature',
      sentences: ['<please>[把][{area}[的]]温度<set_to>{temperature:5-35}度'],
    },
    { intent: 'HassClimateSetTemperature', requires: { domains: ['climate'] }, sentences: ['<please>[把]{name}[的温度]<set_to>{temperature:5-35}度'] },
    {
      intent: 'HassStartTimer',
      sentences: [
        '<please>(设置|设|定|设定|开始|开|来)[1个|个]<dur>[的]<timer>',
        '<please>(设置|设|定|设定|开始)[1个|个]<timer>[,]<dur>',
        '<please>(计时|倒计时)<dur>',
        '<dur>(后|以后|之后)提醒我',
        '<please>(设置|设|定|设定|开始|开|来)[1个|个]<dur>[的]{timer_name}<timer>',
        '<please>(设置|设|定|设定|开始)[1个|个]{timer_name}<timer>[,]<dur>',
      ],
    },
    // A timer with no length ("设一个计时器"): the box asks "要定多长时间？" (timer-intents.ts); the answer is TimerDuration.
    { intent: 'HassStartTimer', sentences: ['<please>(设置|设|定|设定|开始)[1个|个]<timer>'] },
    { intent: 'HassCancelAllTimers', sentences: ['<please><tcancel>(所有|全部)[的]<timer>'] },
    { intent: 'HassCancelTimer', sentences: ['<please><tcancel>[1下]<tref>', '<please>把<tref><tcancel>[吧]'] },
    { intent: 'HassPauseTimer', sentences: ['<please>暂停[1下]<tref>', '<please>把<tref>暂停[1下]'] },
    { intent: 'HassUnpauseTimer', sentences: ['<please>(继续|恢复)<tref>', '<please>让<tref>继续[走|计时]'] },
    { intent: 'HassIncreaseTimer', sentences: ['<please>[把|给|让]<tref>(加|增加|延长|多加)<dur>', '<please>给<tref>再加<dur>'] },
    { intent: 'HassDecreaseTimer', sentences: ['<please>[把|给|让]<tref>(减|减少|减去|缩短|减掉)<dur>', '<please>从<tref>(减去|减掉|扣掉)<dur>'] },
    {
      intent: 'HassTimerStatus',
      sentences: ['<tref>还[剩|有](多久|多少时间|多长时间|几分钟)', '还剩(多久|多少时间|多长时间)', '<tref>[的]状态', '<tref>怎么样了'],
    },
    // The answer to "你说的是哪个计时器？" (the box's own intent, not Home Assistant's).
    { intent: 'TimerChoice', sentences: ['[是]{timer_name}(那个|的那个|那个计时器|计时器)', '[是]<sdur>的[那个|计时器]', '[是]{ordinal}'] },
    // The answer to "要定多长时间？" (the box's own intent).
    { intent: 'TimerDuration', sentences: ['[定|设|计时]<dur>[吧]'] },
    { intent: 'HassGetCurrentTime', sentences: ['[现在]几点[了|钟][了]', '现在[是]什么时间', '[现在]时间[是]多少'] },
    { intent: 'HassGetCurrentDate', sentences: ['今天[是]几号', '今天[是]星期几', '今天[是]礼拜几', '今天[是]什么日子', '今天[是]几月几号', '[今天]日期[是什么]'] },
    {
      intent: 'HassGetWeather',
      sentences: ['[今天|明天]天气(怎么样|如何)', '[今天|明天]{location}[的][今天|明天]天气(怎么样|如何)', '[今天|明天]会下雨吗'],
    },
    { intent: 'HassMediaNext', sentences: ['(下1首|下1曲|下1个|跳过)[歌|歌曲]', '[在]{name}[上](下1首|下1曲|下1个|跳过)'] },
    { intent: 'HassMediaPrevious', sentences: ['(上1首|上1曲|上1个)[歌|歌曲]'] },
    { intent: 'HassMediaPause', sentences: ['暂停[播放|音乐|1下]'] },
    { intent: 'HassMediaUnpause', sentences: ['(继续|恢复)[播放|音乐]'] },
    { intent: 'HassShoppingListAddItem', slots: { list: 'shopping' }, sentences: ['<please>[把]{item}(加到|添加到|加入|放到|放进|记到)[我的]<shop>[里|中|上]'] },
    { intent: 'HassListAddItem', slots: { list: 'todo' }, sentences: ['<please>[把]{item}(加到|添加到|加入|放到|放进|记到)[我的]<todo>[里|中|上]'] },
    { intent: 'HassListAddItem', sentences: ['<please>[把]{item}(加到|添加到|加入|放到|放进)[我的]{list}[清单|列表][里|中|上]'] },
    {
      intent: 'HassListRemoveItem',
      slots: { list: 'shopping' },
      sentences: ['<please>[把]{item}从[我的]<shop>[里|中|上](删掉|删除|去掉|拿掉|移除|划掉)', '<please>(删掉|删除|去掉|拿掉)[我的]<shop>[里|中|上][的]{item}'],
    },
    {
      intent: 'HassListRemoveItem',
      slots: { list: 'todo' },
      sentences: ['<please>[把]{item}从[我的]<todo>[里|中|上](删掉|删除|去掉|拿掉|移除)', '<please>(删掉|删除|去掉|拿掉)[我的]<todo>[里|中|上][的]{item}'],
    },
    { intent: 'HassListCompleteItem', slots: { list: 'todo' }, sentences: ['<please>把{item}(标记为|标成|标为|设为)(完成|已完成|做完了|完成了)', '我[已经](完成|做完)了{item}'] },
    {
      intent: 'HassListGetItems',
      slots: { list: 'shopping' },
      sentences: ['[我的]<shop>[里|中|上](有什么|有哪些[东西]|有啥)', '<please>(读|念|看)[1下][我的]<shop>', '我要买(什么|哪些东西)'],
    },
    {
      intent: 'HassListGetItems',
      slots: { list: 'todo' },
      sentences: ['[我的]<todo>[里|中|上](有什么|有哪些[事]|有啥)', '<please>(读|念|看)[1下][我的]<todo>', '我[今天]有什么要做的[事]'],
    },
    { intent: 'HassListClear', slots: { list: 'shopping' }, sentences: ['<please>清空[我的]<shop>', '<please>把[我的]<shop>清空', '<please>(删掉|删除)[我的]<shop>[里|中|上](所有|全部)[的][东西]'] },
    { intent: 'HassListClear', slots: { list: 'todo' }, sentences: ['<please>清空[我的]<todo>', '<please>把[我的]<todo>清空', '<please>(删掉|删除)[我的]<todo>[里|中|上](所有|全部)[的][事]'] },
    { intent: 'HassNevermind', sentences: ['(算了|没事[了]|不用了|取消|没什么)'] },
  ],
};
