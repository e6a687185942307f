/**
 * The assistant-state plugin (name `assistant-state`): runs the state
 * machine (./state-machine.ts) and is the only publisher of the
 * `assistant_state` bus event. It always runs, with or without a voice
 * pipeline: on a console-only box the kernel's turn facts alone move it
 * (thinking while a turn runs, idle after), and with the voice pipeline its
 * `plugin.voice.activity` facts (captures, speaker, follow-up, mute) keep
 * the box `speaking` until the speaker has finished.
 *
 * Consumes: `turn.started` / `turn.finished` (the kernel's turn facts, see
 * `followTurns`), `stop`, `plugin.voice.activity`.
 */
import type { AssistantState } from '../kernel/assistant-state.js';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import { AssistantStateMachine, type StateChange } from './state-machine.js';

/** The kernel's self-input channel (consolidation): its turns are invisible. */
const SELF_CHANNEL = '_consolidation_';

/**
 * Follow the kernel's turns on the bus: `onStart` when a turn begins running
 * (input id, channel), `onEnd` when it finished. The one place that knows
 * which bus events carry these facts. Returns an unsubscribe function.
 */
export function followTurns(sdk: Pick<PluginSDK, 'subscribe'>, h: { onStart(inputId: string, channel: string): void; onEnd(inputId: string): void }): () => void {
  const offs = [
    sdk.subscribe('turn.started', (e) => h.onStart(e.turn, e.input.channel)),
    sdk.subscribe('turn.finished', (e) => h.onEnd(e.turn)),
  ];
  return () => {
    for (const off of offs) off();
  };
}

/** The plugin. */
export class AssistantStatePlugin implements Plugin {
  readonly name = 'assistant-state';
  private machine = new AssistantStateMachine();
  private readonly unsubs: Array<() => void> = [];

  /** The current state. */
  get state(): AssistantState {
    return this.machine.state;
  }

  /** Subscribe to state changes (tests, status); returns an unsubscribe function. */
  onChange(fn: (c: StateChange) => void): () => void {
    return this.machine.onChange(fn);
  }

  start(sdk: PluginSDK): void {
    this.machine = new AssistantStateMachine();
    this.unsubs.push(
      this.machine.onChange((c) => {
        const input_id = c.event.event === 'turn_start' ? c.event.input_id : undefined;
        sdk.publish('assistant_state', { state: c.to, ...(input_id ? { input_id } : {}) });
      }),
      followTurns(sdk, {
        onStart: (input_id, channel) => {
          if (channel !== SELF_CHANNEL) this.machine.dispatch({ event: 'turn_start', input_id, channel });
        },
        onEnd: (input_id) => this.machine.dispatch({ event: 'turn_end', input_id }),
      }),
      sdk.subscribe('stop', () => void this.machine.dispatch({ event: 'stop' })),
      sdk.subscribe('plugin.voice.activity', (a) => void this.machine.dispatch(a)),
    );
  }

  stop(): void {
    for (const u of this.unsubs.splice(0)) u();
  }
}
