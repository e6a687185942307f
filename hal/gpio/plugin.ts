/**
 * GpioPlugin: the physical stop button (kernel-level: it calls `sdk.stop`,
 * the L4 path of seed 001 "Input Scheduler & Interrupt Mechanism"), the
 * push-to-talk button (`plugin.gpio.ptt` {pressed}), configurable long-press
 * actions, and status LEDs that follow `assistant_state` bus events.
 * Settings plugin.gpio.*; changes re-open the pins.
 *
 * One button does both (the default wiring: one button on GPIO 17, as on the
 * common Pi voice HATs; `ptt_pin` -1, `one_button` true): what a press does
 * depends on the assistant state (`oneButtonPress`): idle -> listen
 * (`plugin.voice.listen` start), listening/thinking/speaking -> stop (L4, as
 * the stop button always did), waiting_for_answer -> "no" (the press event
 * answers the open question, the answer capture is cancelled; nothing is
 * stopped), muted -> nothing. A long press switches the microphone off or
 * on (`plugin.voice.mute`). With a separate ptt_pin both buttons keep their
 * single roles.
 */
import type { Logger } from '../../src/kernel/log-types.js';
import type { GpioButtonEvent } from '../../src/kernel/events.js';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import { errorMessage } from '../../src/kernel/errors.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { Button } from './button.js';
import { createGpio, GPIO_SETTINGS, readGpioConfig, type GpioConfig, type LongPressAction } from './config.js';
import { HalError } from '../common/errors.js';
import type { AssistantState } from '../../src/kernel/assistant-state.js';
import { GpioLeds, type StatusIndicator } from './leds.js';
import { SimGpioDriver } from './sim-driver.js';
import type { GpioDriver, GpioInput } from './types.js';

/** Dependencies: an injected driver (tests, or a shared one) and a clock. Without a driver, `createGpio` picks one from settings. */
export interface GpioPluginDeps {
  driver?: GpioDriver;
  clock?: Clock;
}

/** Which button an event is about. */
export type ButtonRole = 'stop' | 'ptt';

/** What a press of the one button does (the `does` of `plugin.gpio.button`). */
export type OneButtonAction = 'listen' | 'stop' | 'no' | 'none';

/**
 * What a short press of the one button does in `state`: listen when idle
 * (or after an error), "no" while a yes/no question waits for its answer,
 * nothing while muted (a long press unmutes), else stop (listening,
 * thinking, speaking: L4).
 */
export function oneButtonPress(state: AssistantState): OneButtonAction {
  switch (state) {
    case 'idle':
    case 'error':
      return 'listen';
    case 'waiting_for_answer':
      return 'no';
    case 'muted':
      return 'none';
    default:
      return 'stop';
  }
}

/** The GPIO plugin. `kernelLevel` because the stop button calls `sdk.stop('button')`. */
export class GpioPlugin implements Plugin {
  readonly name = 'gpio';
  readonly kernelLevel = true;
  private sdk: PluginSDK | undefined;
  private log: Logger | undefined;
  private driver: GpioDriver | undefined;
  private ownDriver = false;
  private buttons: Button[] = [];
  private leds: StatusIndicator | undefined;
  private unsubs: Array<() => void> = [];
  private openedInputs: GpioInput[] = [];
  private lastState: AssistantState = 'idle';
  /** The microphone is off (the voice pipeline's mute/unmute facts). */
  private muted = false;
  private readonly clock: Clock;

  constructor(private readonly deps: GpioPluginDeps = {}) {
    this.clock = deps.clock ?? systemClock;
  }

  /** The driver in use (a `SimGpioDriver` when simulated), once started. */
  get gpio(): GpioDriver | undefined {
    return this.driver;
  }

  /**
   * Simulator only (WebUI, CLI, end-to-end tests): set the stop or push-to-talk
   * button's level (1 = pressed). Debounce still applies. Throws HalError
   * GPIO_NOT_SIMULATED with the real driver, HAL_BAD_CONFIG when that button has no pin.
   */
  simulateButton(role: ButtonRole, level: 0 | 1): void {
    const drv = this.driver;
    if (!(drv instanceof SimGpioDriver)) throw new HalError('GPIO_NOT_SIMULATED', 'buttons can only be simulated with plugin.gpio.driver = sim (or auto without GPIO hardware)');
    const pin = this.sdk?.settings().get<number>(role === 'stop' ? 'plugin.gpio.stop_pin' : 'plugin.gpio.ptt_pin') ?? -1;
    if (pin < 0) throw new HalError('HAL_BAD_CONFIG', `no ${role} button pin is configured`);
    drv.setLevel(pin, level);
  }

  /** The LEDs' current state, when LEDs are configured. */
  get ledState(): string | undefined {
    return this.leds?.state;
  }

  /** Registers settings, opens the pins. Throws `GpioExportError` (code GPIO_EXPORT) when a pin cannot be claimed; nothing stays open then. */
  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    this.log = sdk.log;
    const settings = sdk.settings();
    for (const def of GPIO_SETTINGS) settings.register(def);
    const cfg = readGpioConfig(settings);
    this.open(cfg);
    this.unsubs.push(
      sdk.subscribe('assistant_state', (e) => {
        this.lastState = e.state;
        this.leds?.show(e.state);
      }),
      sdk.subscribe('plugin.voice.activity', (a) => {
        if (a.event === 'mute' || a.event === 'unmute') this.muted = a.event === 'mute';
      }),
      settings.onChange('plugin.gpio.', () => this.reconfigure()),
    );
  }

  private open(cfg: GpioConfig): void {
    const sdk = this.sdk!;
    if (this.deps.driver) this.driver = this.deps.driver;
    else if (!this.driver) {
      this.driver = createGpio({ driver: cfg.driver, sysfsRoot: cfg.sysfsRoot, chipLabel: cfg.chipLabel }, sdk.log);
      this.ownDriver = true;
    }
    const driver = this.driver;
    try {
      const timing = { debounceMs: cfg.debounceMs, longPressMs: cfg.longPressMs, clock: this.clock };
      const one = cfg.stopPin >= 0 && cfg.pttPin < 0 && cfg.oneButton;
      if (cfg.stopPin >= 0) {
        const b = new Button(this.input(driver, cfg.stopPin, cfg.buttonsActiveLow), timing);
        b.on('press', () => {
          if (one) return this.onePress();
          this.publishButton('stop', 'press', 0);
          sdk.stop('button');
        });
        b.on('release', (e) => this.publishButton('stop', 'release', e.heldMs));
        b.on('long_press', (e) => {
          if (one && cfg.longPressActions.stop.type === 'none') this.oneLongPress(e.heldMs);
          else this.longPress('stop', cfg.longPressActions.stop, e.heldMs);
        });
        this.buttons.push(b);
      }
      if (cfg.pttPin >= 0) {
        const b = new Button(this.input(driver, cfg.pttPin, cfg.buttonsActiveLow), timing);
        b.on('press', () => {
          this.publishButton('ptt', 'press', 0);
          sdk.publish('plugin.gpio.ptt', { pressed: true });
        });
        b.on('release', (e) => {
          this.publishButton('ptt', 'release', e.heldMs);
          sdk.publish('plugin.gpio.ptt', { pressed: false, held_ms: e.heldMs });
        });
        b.on('long_press', (e) => this.longPress('ptt', cfg.longPressActions.ptt, e.heldMs));
        this.buttons.push(b);
      }
      if (Object.keys(cfg.ledPins).length > 0) {
        this.leds = new GpioLeds(driver, { pins: cfg.ledPins, patterns: cfg.ledPatterns, activeLow: cfg.ledsActiveLow, clock: this.clock });
        this.leds.show(this.lastState);
      }
      const buttons = one
        ? `one button on BCM ${cfg.stopPin}: press to talk, to stop, or to answer no${cfg.longPressMs > 0 && cfg.longPressActions.stop.type === 'none' ? `; hold ${cfg.longPressMs / 1000} s to mute or unmute` : ''}`
        : [cfg.stopPin >= 0 ? `stop button on BCM ${cfg.stopPin}` : '', cfg.pttPin >= 0 ? `push-to-talk on BCM ${cfg.pttPin}` : ''].filter(Boolean).join(', ') || 'no buttons';
      sdk.log.info({ driver: driver.kind, stop_pin: cfg.stopPin, ptt_pin: cfg.pttPin, one_button: one, leds: cfg.ledPins }, `gpio ready: ${buttons}`);
    } catch (err) {
      this.closePins();
      throw err;
    }
  }

  private publishButton(button: ButtonRole, action: 'press' | 'release' | 'long_press', heldMs: number, does?: GpioButtonEvent['does']): void {
    this.sdk?.publish('plugin.gpio.button', { button, action, held_ms: heldMs, ...(does ? { does } : {}) });
  }

  /**
   * A press of the one button (see `oneButtonPress`). For "no" the press
   * event goes out first (the home plugin's open question takes it as a no),
   * then the capture waiting for the answer is cancelled, so nothing said
   * meanwhile is handed on.
   */
  private onePress(): void {
    const sdk = this.sdk;
    if (!sdk) return;
    const does = oneButtonPress(this.lastState);
    this.publishButton('stop', 'press', 0, does);
    switch (does) {
      case 'listen':
        sdk.publish('plugin.voice.listen', { action: 'start', source: 'button' });
        return;
      case 'stop':
        sdk.stop('button');
        return;
      case 'no':
        sdk.publish('plugin.voice.listen', { action: 'cancel', source: 'button' });
        return;
      case 'none':
        this.log?.info({ state: this.lastState }, 'gpio: the microphone is off; hold the button to switch it on');
        return;
    }
  }

  /** A long press of the one button: the microphone off, or on again (`plugin.voice.mute`; the voice pipeline announces it). */
  private oneLongPress(heldMs: number): void {
    const sdk = this.sdk;
    if (!sdk) return;
    const muted = !(this.muted || this.lastState === 'muted');
    this.publishButton('stop', 'long_press', heldMs, muted ? 'mute' : 'unmute');
    sdk.publish('plugin.voice.mute', { muted });
  }

  private longPress(button: ButtonRole, action: LongPressAction, heldMs: number): void {
    const sdk = this.sdk;
    if (!sdk) return;
    this.publishButton(button, 'long_press', heldMs);
    switch (action.type) {
      case 'none':
        return;
      case 'stop':
        sdk.stop(`button:${button}:long_press`);
        return;
      case 'event':
        sdk.publish(action.name, { button, held_ms: heldMs });
        return;
      case 'input':
        sdk.injectInput('speaker', action.text, { meta: { source: `gpio:${button}:long_press` } }).catch((err: unknown) => {
          this.log?.warn({ err: errorMessage(err) }, 'long-press input failed');
        });
        return;
    }
  }

  private reconfigure(): void {
    const sdk = this.sdk;
    if (!sdk) return;
    this.closePins();
    if (this.ownDriver) {
      this.driver?.close();
      this.driver = undefined;
      this.ownDriver = false;
    }
    try {
      this.open(readGpioConfig(sdk.settings()));
    } catch (err) {
      sdk.log.error({ err: errorMessage(err) }, 'gpio: new settings could not be applied');
      sdk.publish('system', { kind: 'gpio_error', message: errorMessage(err) });
    }
  }

  private input(driver: GpioDriver, bcm: number, activeLow: boolean): GpioInput {
    const pin = driver.openInput(bcm, { activeLow });
    this.openedInputs.push(pin);
    return pin;
  }

  /** Close buttons, their input pins and the LEDs (the driver stays). */
  private closePins(): void {
    for (const b of this.buttons) b.close();
    this.buttons = [];
    for (const p of this.openedInputs) p.close();
    this.openedInputs = [];
    this.leds?.close();
    this.leds = undefined;
  }

  async stop(): Promise<void> {
    for (const u of this.unsubs) u();
    this.unsubs = [];
    this.closePins();
    if (this.ownDriver) this.driver?.close();
    this.driver = undefined;
    this.ownDriver = false;
    this.sdk = undefined;
  }
}
