/**
 * A deliberately small intent matcher for the home tests, independent of
 * src/intents: a handful of regular expressions per intent, names and rooms
 * looked up in the vocabulary it is given. It produces the same IntentMatch
 * shape (Home Assistant intent names) as the real matcher.
 */
import type { IntentMatch, IntentSlots, Vocabulary } from '../../src/intents/types.js';
import { detectLanguage } from '../../src/kernel/language.js';

function norm(s: string): string {
  return s.toLowerCase().replace(/[.?!,]/g, '').replace(/\s+/g, ' ').trim();
}

function findName(v: Vocabulary, said: string): { name: string; domain: string } | undefined {
  const s = norm(said).replace(/^the /, '');
  for (const e of v.entities) {
    for (const n of [e.name, ...(e.aliases ?? [])]) if (norm(n) === s) return { name: e.name, domain: e.domain };
  }
  return undefined;
}

function findArea(v: Vocabulary, said: string): string | undefined {
  const s = norm(said).replace(/^the /, '');
  const zh: Record<string, string> = { 客厅: 'living room', 办公室: 'office', 厨房: 'kitchen', 卧室: 'bedroom' };
  return v.areas.find((a) => norm(a) === s || norm(a) === zh[said]);
}

const NUM: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3 };

function seconds(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/(\d+|a|an|one|two|three) (hour|minute|second)s?/g)) {
    const n = Number(m[1]) || NUM[m[1] as string] || 0;
    total += n * (m[2] === 'hour' ? 3600 : m[2] === 'minute' ? 60 : 1);
  }
  for (const m of text.matchAll(/(\d+)(小时|分钟|秒)/g)) total += Number(m[1]) * (m[2] === '小时' ? 3600 : m[2] === '分钟' ? 60 : 1);
  return total;
}

/** Match `text` (English or Chinese) against the vocabulary; null when not a command. */
export function stubMatcher(text: string, v: Vocabulary, language?: 'en' | 'zh'): IntentMatch | null {
  const lang = language ?? detectLanguage(text);
  const t = lang === 'zh' ? text.replace(/[。？！，\s]/g, '') : norm(text);
  const hit = (intent: string, slots: IntentSlots): IntentMatch => ({ intent, slots, text: t, language: lang });
  if (lang === 'zh') {
    let m = /^把(.+?)(打开|关掉|关闭|关上|锁上|解锁)$/.exec(t);
    if (m) {
      const n = findName(v, m[1] as string);
      if (n) return hit(['打开', '锁上'].includes(m[2] as string) ? 'HassTurnOn' : 'HassTurnOff', { name: n.name, domain: n.domain });
    }
    m = /^把(.+?)的?灯(打开|关掉|关闭|关上)$/.exec(t);
    if (m && findArea(v, m[1] as string)) return hit(m[2] === '打开' ? 'HassTurnOn' : 'HassTurnOff', { area: findArea(v, m[1] as string), domain: 'light' });
    m = /^(.+?)锁(上|好)了吗$/.exec(t);
    if (m && findName(v, m[1] as string)) return hit('HassGetState', { name: findName(v, m[1] as string)?.name, domain: 'lock', state: 'locked' });
    if (/^(现在)?(室内)?温度(是)?多少(度)?$/.test(t)) return hit('HassClimateGetTemperature', {});
    m = /^(设|定)(一个)?(.+)的?计时器$/.exec(t);
    if (m) return hit('HassStartTimer', { seconds: seconds(m[3] as string) });
    if (/^取消计时器$/.test(t)) return hit('HassCancelTimer', {});
    if (/^现在几点(了)?$/.test(t)) return hit('HassGetCurrentTime', {});
    if (/^今天(是)?几号$/.test(t)) return hit('HassGetCurrentDate', {});
    return null;
  }
  let m = /^turn (on|off) (?:all of )?(?:the )?(lights|switches) in the (.+)$/.exec(t);
  if (m && findArea(v, m[3] as string)) return hit(m[1] === 'on' ? 'HassTurnOn' : 'HassTurnOff', { area: findArea(v, m[3] as string), domain: m[2] === 'lights' ? 'light' : 'switch' });
  m = /^turn (on|off) (.+)$/.exec(t);
  if (m) {
    const n = findName(v, m[2] as string);
    if (n) return hit(m[1] === 'on' ? 'HassTurnOn' : 'HassTurnOff', { name: n.name, domain: n.domain });
  }
  m = /^(lock|unlock|open|close) (.+)$/.exec(t);
  if (m) {
    const n = findName(v, m[2] as string);
    if (n) return hit(m[1] === 'lock' || m[1] === 'open' ? 'HassTurnOn' : 'HassTurnOff', { name: n.name, domain: n.domain });
  }
  m = /^set (.+?) brightness to (\d+) percent$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassLightSet', { name: findName(v, m[1] as string)?.name, brightness: Number(m[2]) });
  m = /^(?:set|turn) (.+?) to (red|green|blue|white)$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassLightSet', { name: findName(v, m[1] as string)?.name, color: m[2] });
  m = /^is (.+?) (locked|unlocked|open|closed|on|off)$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassGetState', { name: findName(v, m[1] as string)?.name, state: m[2] });
  m = /^what(?:'s| is) the temperature(?: of (.+))?$/.exec(t);
  if (m) {
    if (!m[1]) return hit('HassClimateGetTemperature', {});
    const n = findName(v, m[1]);
    if (n) return hit('HassClimateGetTemperature', { name: n.name });
  }
  m = /^set (.+?) to (\d+(?:\.\d+)?) degrees$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassClimateSetTemperature', { name: findName(v, m[1] as string)?.name, temperature: Number(m[2]) });
  m = /^(?:run|activate|press) (.+)$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassTurnOn', { name: findName(v, m[1] as string)?.name });
  m = /^set a timer for (.+)$/.exec(t);
  if (m) return hit('HassStartTimer', { seconds: seconds(m[1] as string) });
  if (t === 'cancel timer') return hit('HassCancelTimer', {});
  if (t === 'timer status') return hit('HassTimerStatus', {});
  m = /^skip on (.+)$/.exec(t);
  if (m && findName(v, m[1] as string)) return hit('HassMediaNext', { name: findName(v, m[1] as string)?.name });
  if (t === 'next') return hit('HassMediaNext', {});
  if (t === 'pause') return hit('HassMediaPause', {});
  if (t === 'resume') return hit('HassMediaUnpause', {});
  m = /^what's the weather like(?: in (.+))?$/.exec(t);
  if (m) return hit('HassGetWeather', m[1] ? { location: m[1] } : {});
  if (t === 'what time is it') return hit('HassGetCurrentTime', {});
  if (t === "what's the date") return hit('HassGetCurrentDate', {});
  return null;
}
