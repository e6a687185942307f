/**
 * GPIO settings (plugin.gpio.*) and the typed config read from them, plus
 * `createGpio`, which picks the onoff driver or the simulator.
 */
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import { HalError } from '../common/errors.js';
import { chooseDriver, DRIVER_MODES, type DriverMode } from '../common/mode.js';
import { ASSISTANT_STATES, legacyAssistantState, type AssistantState } from '../../src/kernel/assistant-state.js';
import { DEFAULT_LED_PATTERNS, type LedPattern } from './leds.js';
import { OnoffGpioDriver, probeSysfsGpio } from './onoff-driver.js';
import { SimGpioDriver } from './sim-driver.js';
import type { GpioDriver } from './types.js';

/** What a long press does: nothing, a stop, a bus event (`plugin.*`), or an input text as if spoken. */
export type LongPressAction = { type: 'none' } | { type: 'stop' } | { type: 'event'; name: `plugin.${string}` } | { type: 'input'; text: string };

/** Typed GPIO configuration. Pins are BCM numbers; -1 disables a button. Times in ms. */
export interface GpioConfig {
  driver: DriverMode;
  sysfsRoot: string;
  chipLabel: string;
  stopPin: number;
  pttPin: number;
  /** The stop button is the one button (listen, stop, no, mute) when no push-to-talk pin is set (plugin.gpio.one_button). */
  oneButton: boolean;
  buttonsActiveLow: boolean;
  debounceMs: number;
  longPressMs: number;
  longPressActions: { stop: LongPressAction; ptt: LongPressAction };
  ledPins: Record<string, number>;
  ledPatterns: Record<AssistantState, LedPattern>;
  ledsActiveLow: boolean;
}

/** Settings registered by GpioPlugin. */
export const GPIO_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.gpio.driver', type: 'string', default: 'auto', enum: DRIVER_MODES, description: "GPIO driver: 'auto' (onoff when /sys/class/gpio is usable, else the simulator), 'real' or 'sim'" },
  { key: 'plugin.gpio.sysfs_root', type: 'string', default: '/sys', description: 'Root of sysfs, where class/gpio/gpiochip*/base and label are read to map BCM pins to sysfs numbers' },
  { key: 'plugin.gpio.chip_label', type: 'string', default: '', description: 'Label of the gpiochip driving the header when auto-detection is wrong (e.g. pinctrl-rp1)' },
  { key: 'plugin.gpio.stop_pin', type: 'integer', default: 17, min: -1, max: 27, description: 'BCM pin of the stop button (-1: none). Stops speech and the LLM at once. With no ptt_pin it is the one button (see one_button).' },
  { key: 'plugin.gpio.ptt_pin', type: 'integer', default: -1, min: -1, max: 27, description: 'BCM pin of a separate push-to-talk button (-1: none: the stop button is the one button)' },
  {
    key: 'plugin.gpio.one_button',
    type: 'boolean',
    default: true,
    description:
      'With no ptt_pin, the stop button does both (the common Pi voice HATs have one button): a press while idle listens, while listening, thinking or speaking stops, while a yes/no question waits answers no; a long press (long_press_ms) switches the microphone off or on. false: it only stops.',
  },
  { key: 'plugin.gpio.buttons_active_low', type: 'boolean', default: true, description: 'Buttons connect the pin to GND (with a pull-up); false when they connect it to 3.3 V' },
  { key: 'plugin.gpio.debounce_ms', type: 'integer', default: 30, min: 0, max: 500, description: 'A button level must hold this long (ms) before it counts' },
  { key: 'plugin.gpio.long_press_ms', type: 'integer', default: 2000, min: 0, max: 10000, description: 'Hold time (ms) of a long press (0: off); the one button mutes and unmutes with it' },
  { key: 'plugin.gpio.long_press_actions', type: 'json', default: { stop: { type: 'none' }, ptt: { type: 'none' } }, description: 'Per button (stop, ptt): {"type":"none"|"stop"} or {"type":"event","name":"plugin.x"} or {"type":"input","text":"good night"}. An action other than none on the one button replaces its mute' },
  { key: 'plugin.gpio.led_pins', type: 'json', default: {}, description: 'Status LEDs: name -> BCM pin, e.g. {"red":22,"green":23,"blue":24} or {"status":22}' },
  { key: 'plugin.gpio.led_patterns', type: 'json', default: DEFAULT_LED_PATTERNS, description: `Per state (${ASSISTANT_STATES.join(', ')}): {"on":["blue"],"blink_ms":300}. A state left out keeps its default, except waiting_for_answer, which looks like your listening pattern when you set that one` },
  { key: 'plugin.gpio.leds_active_low', type: 'boolean', default: false, description: 'LEDs light when the pin is low (wired to 3.3 V through the resistor)' },
];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validate one long-press action; throws HalError HAL_BAD_CONFIG. */
export function parseLongPressAction(v: unknown, key: string): LongPressAction {
  if (v === undefined || v === null) return { type: 'none' };
  if (!isRecord(v)) throw new HalError('HAL_BAD_CONFIG', `${key}: a long-press action is an object with "type"`);
  if (v.type === 'none' || v.type === 'stop') return { type: v.type };
  if (v.type === 'event' && typeof v.name === 'string' && v.name.startsWith('plugin.')) return { type: 'event', name: v.name as `plugin.${string}` };
  if (v.type === 'input' && typeof v.text === 'string' && v.text.trim()) return { type: 'input', text: v.text };
  throw new HalError('HAL_BAD_CONFIG', `${key}: unknown long-press action ${JSON.stringify(v)} (none, stop, event with name "plugin.*", input with text)`);
}

function parsePins(v: unknown): Record<string, number> {
  if (!isRecord(v)) throw new HalError('HAL_BAD_CONFIG', 'plugin.gpio.led_pins must be an object of name -> BCM pin');
  const out: Record<string, number> = {};
  for (const [k, p] of Object.entries(v)) {
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0) throw new HalError('HAL_BAD_CONFIG', `plugin.gpio.led_pins.${k}: ${JSON.stringify(p)} is not a BCM pin number`);
    out[k] = p;
  }
  return out;
}

/**
 * The LED pattern of every state from plugin.gpio.led_patterns, over the
 * defaults. Patterns written before waiting_for_answer existed keep working:
 * when the setting has no waiting_for_answer but a listening pattern, the
 * box shows that one while it waits for a yes/no (waiting_for_answer is a
 * kind of listening). Muted has its own default (steady red).
 */
export function parsePatterns(v: unknown): Record<AssistantState, LedPattern> {
  const out: Record<AssistantState, LedPattern> = { ...DEFAULT_LED_PATTERNS };
  if (!isRecord(v)) return out;
  for (const s of ASSISTANT_STATES) {
    const p = v[s];
    if (!isRecord(p)) continue;
    const on = Array.isArray(p.on) ? p.on.filter((x): x is string => typeof x === 'string') : [];
    out[s] = { on, blink_ms: typeof p.blink_ms === 'number' && p.blink_ms > 0 ? p.blink_ms : undefined };
  }
  if (!isRecord(v.waiting_for_answer) && isRecord(v[legacyAssistantState('waiting_for_answer')])) out.waiting_for_answer = out[legacyAssistantState('waiting_for_answer')];
  return out;
}

/** Read and validate plugin.gpio.* into a `GpioConfig`. Throws HalError HAL_BAD_CONFIG on malformed JSON settings. */
export function readGpioConfig(s: Pick<SettingsAPI, 'get'>): GpioConfig {
  const actions = s.get<unknown>('plugin.gpio.long_press_actions');
  const a = isRecord(actions) ? actions : {};
  return {
    driver: s.get<DriverMode>('plugin.gpio.driver'),
    sysfsRoot: s.get<string>('plugin.gpio.sysfs_root') || '/sys',
    chipLabel: s.get<string>('plugin.gpio.chip_label') ?? '',
    stopPin: s.get<number>('plugin.gpio.stop_pin'),
    pttPin: s.get<number>('plugin.gpio.ptt_pin'),
    oneButton: s.get<boolean>('plugin.gpio.one_button'),
    buttonsActiveLow: s.get<boolean>('plugin.gpio.buttons_active_low'),
    debounceMs: s.get<number>('plugin.gpio.debounce_ms'),
    longPressMs: s.get<number>('plugin.gpio.long_press_ms'),
    longPressActions: {
      stop: parseLongPressAction(a.stop, 'plugin.gpio.long_press_actions.stop'),
      ptt: parseLongPressAction(a.ptt, 'plugin.gpio.long_press_actions.ptt'),
    },
    ledPins: parsePins(s.get<unknown>('plugin.gpio.led_pins')),
    ledPatterns: parsePatterns(s.get<unknown>('plugin.gpio.led_patterns')),
    ledsActiveLow: s.get<boolean>('plugin.gpio.leds_active_low'),
  };
}

/** Minimal config of `createGpio`: driver mode and sysfs root (default '/sys'). */
export interface CreateGpioConfig {
  driver: DriverMode;
  sysfsRoot?: string;
  chipLabel?: string;
}

/** Pick the onoff driver or the simulator ('auto': onoff when sysfs GPIO is usable) and log which. */
export function createGpio(cfg: CreateGpioConfig, log: Logger): GpioDriver {
  const root = cfg.sysfsRoot || '/sys';
  const which = chooseDriver('gpio', cfg.driver, () => probeSysfsGpio(root), log);
  if (which === 'sim') return new SimGpioDriver();
  return new OnoffGpioDriver({ sysfsRoot: root, chipLabel: cfg.chipLabel || undefined, log });
}
