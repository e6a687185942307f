/**
 * The short spoken sentences of the local intents, in English and Chinese.
 * One function per message; `lang` is 'en' or 'zh' (anything else: English).
 */
import { AREA_NAMES_ZH } from '../intents/builtin-lists.js';
import { hasHan } from '../kernel/language.js';
import type { Entity, EntityState } from './entities.js';

/** Reply language. */
export type Lang = 'en' | 'zh';

/** 'zh' for 'zh*', else 'en'. */
export function toLang(l: string | undefined): Lang {
  return l?.startsWith('zh') ? 'zh' : 'en';
}

const DOMAIN_EN: Record<string, [string, string]> = {
  light: ['light', 'lights'], switch: ['switch', 'switches'], cover: ['cover', 'covers'], lock: ['lock', 'locks'],
  climate: ['thermostat', 'thermostats'], fan: ['fan', 'fans'], scene: ['scene', 'scenes'], button: ['button', 'buttons'],
  sensor: ['sensor', 'sensors'], binary_sensor: ['sensor', 'sensors'], media_player: ['media player', 'media players'],
};
const DOMAIN_ZH: Record<string, string> = {
  light: '灯', switch: '开关', cover: '窗帘', lock: '锁', climate: '空调', fan: '风扇', scene: '场景', button: '按钮', sensor: '传感器', binary_sensor: '传感器',
};

/** "the Standing Light" / "客厅灯". */
export function the(e: Pick<Entity, 'name'>, lang: Lang): string {
  if (lang === 'zh') return e.name;
  return /^(the|a|an|my)\s/i.test(e.name) ? e.name : `the ${e.name}`;
}

/**
 * the() with the kind of a button, scene or script after a name that does not
 * already say it ("the Party Time button", "the Mood Lighting scene"): a
 * tester heard "Pressed the Party Time." Other devices as the() says them.
 */
export function theNamed(e: Pick<Entity, 'name' | 'component'>, lang: Lang): string {
  const kind: Record<string, string> = { button: 'button', scene: 'scene', script: 'script' };
  const k = kind[e.component];
  if (lang === 'zh' || !k || new RegExp(`\\b${k}$`, 'i').test(e.name.trim())) return the(e, lang);
  return `${the(e, lang)} ${k}`;
}

/**
 * The verb "be" for a device's English name: "are" when its last word reads
 * as a plural ("Kitchen Lights", "Living Room Blinds": longer than three
 * letters and ends in s, but not ss, us or is: not "Glass", "Status",
 * "Tennis", "Gas"), else "is". A tester heard "the Kitchen Lights is on".
 */
export function isAre(e: Pick<Entity, 'name'>): 'is' | 'are' {
  const last = e.name.trim().split(/\s+/).pop()?.toLowerCase() ?? '';
  return last.length > 3 && /s$/.test(last) && !/(ss|us|is)$/.test(last) ? 'are' : 'is';
}

/** "2 lights" / "2个灯". */
export function count(n: number, domain: string, lang: Lang): string {
  if (lang === 'zh') return `${n}个${DOMAIN_ZH[domain] ?? '设备'}`;
  const w = DOMAIN_EN[domain] ?? ['device', 'devices'];
  return `${n} ${n === 1 ? w[0] : w[1]}`;
}

/** Past-tense verb of an action for the reply. */
export function done(action: string, lang: Lang): string {
  const en: Record<string, string> = {
    turn_on: 'Turned on', turn_off: 'Turned off', toggle: 'Toggled', open: 'Opened', close: 'Closed', stop: 'Stopped',
    lock: 'Locked', unlock: 'Unlocked', activate: 'Activated', press: 'Pressed', set_position: 'Moved',
  };
  const zh: Record<string, string> = {
    turn_on: '已打开', turn_off: '已关闭', toggle: '已切换', open: '已打开', close: '已关闭', stop: '已停止',
    lock: '已锁上', unlock: '已解锁', activate: '已启动', press: '已按下', set_position: '已调整',
  };
  return (lang === 'zh' ? zh[action] : en[action]) ?? (lang === 'zh' ? '已执行' : 'Done:');
}

/** The verb phrase of an action for a question ("unlock"). */
export function verb(action: string, lang: Lang): string {
  const en: Record<string, string> = { unlock: 'unlock', open: 'open', set_position: 'move', lock: 'lock', turn_on: 'turn on', turn_off: 'turn off', press: 'press', activate: 'activate', close: 'close', set_temperature: 'change' };
  const zh: Record<string, string> = { unlock: '解锁', open: '打开', set_position: '调整', lock: '锁上', turn_on: '打开', turn_off: '关闭', press: '按下', activate: '启动', close: '关闭', set_temperature: '调节' };
  return (lang === 'zh' ? zh[action] : en[action]) ?? action.replace(/_/g, ' ');
}

/** Spoken number: 21.5 -> "21.5", 21 -> "21". */
export function num(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** One sentence describing an entity's state. */
export function describeState(e: Entity, s: EntityState, available: boolean, lang: Lang): string {
  const zh = lang === 'zh';
  if (!available) return zh ? `${e.name}现在不可用。` : `${cap(the(e, lang))} ${isAre(e)} unavailable.`;
  switch (e.component) {
    case 'climate': {
      const parts: string[] = [];
      if (s.current_temperature !== undefined) parts.push(zh ? `当前${num(s.current_temperature)}度` : `it is ${num(s.current_temperature)} degrees`);
      if (s.target_temperature !== undefined) parts.push(zh ? `设定${num(s.target_temperature)}度` : `set to ${num(s.target_temperature)}`);
      if (s.mode) parts.push(zh ? `模式${s.mode}` : `in ${s.mode} mode`);
      if (!parts.length) return zh ? `我还不知道${e.name}的状态。` : `I don't know the state of ${the(e, lang)} yet.`;
      return zh ? `${e.name}：${parts.join('，')}。` : `At ${the(e, lang)}, ${parts.join(', ')}.`;
    }
    case 'sensor':
      if (s.state === undefined) return zh ? `我还没有收到${e.name}的读数。` : `I have no reading from ${the(e, lang)} yet.`;
      return zh ? `${e.name}是${s.state}${s.unit ?? ''}。` : `${cap(the(e, lang))} ${isAre(e)} ${s.state}${s.unit ? (s.unit === '%' ? ' percent' : ` ${s.unit}`) : ''}.`;
    case 'scene':
    case 'button':
      return zh ? `${e.name}可以启动。` : `${cap(the(e, lang))} can be activated.`;
    default: {
      if (s.state === undefined) return zh ? `我还不知道${e.name}的状态。` : `I don't know the state of ${the(e, lang)} yet.`;
      const zhState: Record<string, string> = { on: '开着', off: '关着', open: '开着', closed: '关着', locked: '锁着', unlocked: '没锁', opening: '正在打开', closing: '正在关闭', stopped: '停着', jammed: '卡住了' };
      let extra = '';
      if (e.component === 'light' && s.state === 'on' && s.brightness !== undefined) {
        extra = zh ? `，亮度${Math.round((s.brightness / 255) * 100)}%` : ` at ${Math.round((s.brightness / 255) * 100)} percent`;
      }
      if (e.component === 'cover' && s.position !== undefined) extra = zh ? `，开度${s.position}%` : `, ${s.position} percent open`;
      return zh ? `${e.name}${zhState[s.state] ?? s.state}${extra}。` : `${cap(the(e, lang))} ${isAre(e)} ${s.state}${extra}.`;
    }
  }
}

/** Capitalise the first letter. */
export function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Join names: "A, B and C" / "A、B和C". */
export function joinNames(names: string[], lang: Lang): string {
  if (names.length <= 1) return names[0] ?? '';
  if (lang === 'zh') return `${names.slice(0, -1).join('、')}和${names[names.length - 1]}`;
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** Colour names (the intents' colour list) to RGB. */
export const COLOUR_RGB: Readonly<Record<string, { r: number; g: number; b: number }>> = {
  white: { r: 255, g: 255, b: 255 }, black: { r: 0, g: 0, b: 0 }, red: { r: 255, g: 0, b: 0 }, orange: { r: 255, g: 165, b: 0 },
  yellow: { r: 255, g: 255, b: 0 }, green: { r: 0, g: 255, b: 0 }, blue: { r: 0, g: 0, b: 255 }, purple: { r: 128, g: 0, b: 128 },
  brown: { r: 165, g: 42, b: 42 }, pink: { r: 255, g: 192, b: 203 }, turquoise: { r: 64, g: 224, b: 208 }, cyan: { r: 0, g: 255, b: 255 },
  magenta: { r: 255, g: 0, b: 255 },
};
const COLOUR_ZH: Record<string, string> = {
  white: '白色', black: '黑色', red: '红色', orange: '橙色', yellow: '黄色', green: '绿色', blue: '蓝色', purple: '紫色', brown: '棕色', pink: '粉色', turquoise: '青绿色', cyan: '青色', magenta: '品红色',
};

/** Spoken colour name in `lang`. */
export function colourName(c: string, lang: Lang): string {
  return lang === 'zh' ? (Object.hasOwn(COLOUR_ZH, c) ? COLOUR_ZH[c] : undefined) ?? c : c;
}

/** A room's name in `lang`: for Chinese, the usual Chinese word for an English room name (first match), else the name as announced. */
export function areaName(area: string, lang: Lang): string {
  if (lang !== 'zh' || hasHan(area)) return area;
  const l = area.trim().toLowerCase();
  for (const [zh, names] of Object.entries(AREA_NAMES_ZH)) if (names.includes(l)) return zh;
  return area;
}

/** The colour name of an RGB value when it is one of COLOUR_RGB, else undefined. */
function colourOf(c: { r: number; g: number; b: number }): string | undefined {
  for (const [name, v] of Object.entries(COLOUR_RGB)) if (v.r === c.r && v.g === c.g && v.b === c.b) return name;
  return undefined;
}

/**
 * What a command was, as a verb phrase after "I could not" / "没能": "set the
 * Bed Light to 40 percent", "set the Bed Light to red", "set the EcoBee to 21
 * degrees", "move the Sliding Door to 30 percent", "turn on the Standing
 * Light". `act` is the component's normalised action (commands.ts
 * normaliseAction); `a` the action with its values.
 */
export function actionPhrase(e: Pick<Entity, 'name'>, act: string, a: { brightness_pct?: number; color?: { r: number; g: number; b: number }; temperature?: number; position?: number; percentage?: number }, lang: Lang): string {
  const zh = lang === 'zh';
  const to: string[] = [];
  if (a.brightness_pct !== undefined) to.push(zh ? `${Math.round(a.brightness_pct)}%` : `${Math.round(a.brightness_pct)} percent`);
  if (a.color) {
    const n = colourOf(a.color);
    to.push(n ? colourName(n, lang) : zh ? `颜色${a.color.r},${a.color.g},${a.color.b}` : `the colour ${a.color.r}, ${a.color.g}, ${a.color.b}`);
  }
  if (act === 'set_temperature' && a.temperature !== undefined) to.push(zh ? `${num(a.temperature)}度` : `${num(a.temperature)} degrees`);
  if (act === 'set_position' && a.position !== undefined) to.push(zh ? `${Math.round(a.position)}%` : `${Math.round(a.position)} percent`);
  if (a.percentage !== undefined && to.length === 0) to.push(zh ? `${Math.round(a.percentage)}%` : `${Math.round(a.percentage)} percent`);
  if (to.length) {
    const verbEn = act === 'set_position' ? 'move' : 'set';
    return zh ? `把${e.name}调到${to.join('，')}` : `${verbEn} ${the(e, lang)} to ${to.join(' and ')}`;
  }
  return zh ? `${verb(act, lang)}${e.name}` : `${verb(act, lang)} ${the(e, lang)}`;
}

/**
 * What the box says when devices it commanded sent no state report in time
 * (report-watch.ts), for the devices of one or more commands: each device's
 * name and its command's phrase ("turn on the Kitchen Light", actionPhrase),
 * in the order commanded: "I asked to turn on the Kitchen Light and lock the
 * Front Door, but they have not reported back, so it may not have happened."
 */
export function unreportedText(items: ReadonlyArray<{ name: string; phrase: string }>, lang: Lang): string {
  const phrases = items.map((x) => x.phrase);
  if (lang === 'zh') return `${joinNames(items.map((x) => x.name), lang)}没有回报状态，可能没有收到“${phrases.join('，')}”的指令。`;
  const who = items.length === 1 ? 'it has' : 'they have';
  return `I asked to ${joinNames(phrases, lang)}, but ${who} not reported back, so it may not have happened.`;
}
