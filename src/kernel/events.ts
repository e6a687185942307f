/**
 * The typed bus's event map (seed 000 §12): each event name with its payload
 * type, in three parts:
 * - kernel events (`raw_input`, `output`, `system`, `assistant_state`, `stop`);
 * - the turn events (src/kernel/turn-events.ts: `turn.started`,
 *   `context.projected`, `llm.requested`, `llm.delta`, `llm.completed`,
 *   `tool.pre_execute`, `tool.executed`, `turn.interrupted`, `error`,
 *   `turn.finished`; `output` is shared with direct deliveries), each
 *   published with the event itself as payload;
 * - `PluginEvents`: every `plugin.<name>.<event>` a built-in plugin publishes,
 *   declared once here so publisher and receivers share one payload type.
 *   A name declared nowhere (an external plugin's, a long-press action's
 *   configured name) carries `unknown`: its receivers check what they get.
 * No IO here.
 */
import type { InputMessage } from './turn-types.js';
import type { TurnEventOf, TurnEventType } from './turn-events.js';
import type { AssistantState, VoiceActivity } from './assistant-state.js';
import type { Vocabulary } from '../intents/types.js';

/** Kernel events. */
export interface KernelEvents {
  /** An input was accepted: queued as a turn, or handed to a running turn that asked for it (awaitInput). */
  raw_input: InputMessage;
  /**
   * A delivery to an output channel: by a turn (`turn` set; the turn event
   * `output`), by a plugin's sendOutput or an output_send tool.
   */
  output: Omit<TurnEventOf<'output'>, 'turn'> & { turn?: string };
  system: { kind: string; message: string; data?: Record<string, unknown> };
  /** The assistant's visible state (LEDs, HA sensor); published only by the assistant-state plugin (src/voice/assistant-state-plugin.ts). */
  assistant_state: { state: AssistantState; input_id?: string };
  /** A stop happened (button, /stop, CLI, HA). */
  stop: { source: string; cancelled_inputs: number };
}

/** Each turn event under its own name, the event itself as payload (`output` is in KernelEvents). */
export type TurnBusEvents = { [K in Exclude<TurnEventType, 'output'>]: TurnEventOf<K> };

/** A GPIO button (hal/gpio): which one, what happened, how long it was held (ms; 0 on press). */
export interface GpioButtonEvent {
  button: 'stop' | 'ptt';
  action: 'press' | 'release' | 'long_press';
  held_ms: number;
  /**
   * What the press or long press did, when the button is the one button of the default wiring (the stop
   * pin with no push-to-talk pin, hal/gpio/plugin.ts): `listen` (idle), `stop` (busy), `no` (the answer to
   * a yes/no question), `mute` / `unmute` (long press), `none` (a press while muted). Absent otherwise.
   */
  does?: 'listen' | 'stop' | 'no' | 'mute' | 'unmute' | 'none';
}

/** Payloads of the built-in plugins' events. */
export interface PluginEvents {
  /** hal/gpio: a button was pressed, released or held past the long-press time. */
  'plugin.gpio.button': GpioButtonEvent;
  /** hal/gpio: the push-to-talk button went down (`pressed: true`) or up (`held_ms`). */
  'plugin.gpio.ptt': { pressed: boolean; held_ms?: number };
  /**
   * hal/camera: a snapshot was taken (`file` when kept on disk; `captured_at` ms since the epoch; `camera` the
   * camera's name; `sha256` and `picture_id` when the memory's picture store keeps it; `turn` the input id when a
   * turn asked for it).
   */
  'plugin.camera.snapshot': {
    file?: string;
    width: number;
    height: number;
    bytes: number;
    source: string;
    camera?: string;
    captured_at: number;
    image_base64: string;
    sha256?: string;
    picture_id?: number;
    turn?: string;
  };
  /** hal/serial: a JSON object line the device sent on its own. */
  'plugin.serial.reading': Record<string, unknown>;
  /** hal/serial: the port opened or closed (`disconnected` when the device went away). */
  'plugin.serial.status': { connected: boolean; path: string; disconnected?: boolean };
  /**
   * src/plugins/timers: a timer was started, cancelled, paused, resumed, lengthened or shortened (by the timer
   * tools or a local intent); `seconds` the length it was set for, `ends_at` ms since the epoch (a paused timer's
   * end if it were resumed now). `homeagent listen` reports it as something done; `homeagent logs` shows it.
   */
  'plugin.timers.changed': { change: 'started' | 'cancelled' | 'paused' | 'resumed' | 'increased' | 'decreased'; id: string; name?: string; seconds: number; ends_at: number };
  /** src/plugins/lists: an item was added to, removed from or completed on the shopping list or the to-do list. */
  'plugin.lists.changed': { change: 'added' | 'removed' | 'completed'; list: 'shopping' | 'todo'; id: string; text: string };
  /** src/home: a device command was sent (QoS 1, acknowledged by the broker). */
  'plugin.home.command': { topic: string; payload: string };
  /**
   * src/home/report-watch.ts: devices commanded did not report their state within plugin.home.report_timeout_ms
   * (ids, names, the command's channel, what the box says). `homeagent logs` shows it.
   */
  'plugin.home.unreported': { ids: string[]; names: string[]; channel: string; text: string };
  /**
   * src/home/confirm.ts: a risky action's question was settled (DecisionRecord: who asked, what for, the decision,
   * how the answer came and on which channel, ms since the epoch). `homeagent logs` shows it.
   */
  'plugin.home.decision': { who: string; what: string; decision: 'confirmed' | 'denied' | 'timeout' | 'superseded'; by: 'input' | 'button' | 'api' | 'stop' | 'timer' | 'gate'; channel?: string; at: number };
  /**
   * src/home: a device's state or availability changed (a state message from MQTT, its availability topic, or the
   * broker connection): the device as `homeagent devices` lists it. The WebUI's Devices page shows it live.
   */
  'plugin.home.state': { id: string; name: string; component: string; area?: string; available: boolean; state: Record<string, unknown> };
  /** src/home: the set of devices changed (one announced, renamed, moved or removed): `entities` known now. */
  'plugin.home.devices': { entities: number };
  /**
   * src/home: the home's vocabulary (device names, rooms, lists) for the speech grammar, on start and whenever
   * devices, names or rooms change. Retained: a subscriber that comes later gets the current one at once.
   */
  'plugin.home.vocabulary': { vocabulary: Vocabulary; entities: number; areas: string[] };
  /** src/voice: the voice pipeline's facts for the assistant state (captures, speaker, follow-up, mute). */
  'plugin.voice.activity': VoiceActivity;
  /**
   * src/voice: speech the box did not act on because it did not understand it (`homeagent logs`): what the
   * recogniser heard (`heard`, when it says), the rule that refused it (`reason`, SttResult.reason), the two
   * words it could not tell apart (`unsure_between`), what the box said, and whether a yes/no question was waiting.
   */
  /**
   * src/voice: the box has finished speaking a yes/no question (a reply marked meta.confirmation, or its "Please say
   * yes or no.") on `channel`; the home plugin's question is timed from here (ConfirmationGate.listening).
   */
  'plugin.voice.question_spoken': { channel: string };
  'plugin.voice.not_understood': { heard?: string; reason?: string; unsure_between?: [string, string]; said: string; answering: boolean };
  /**
   * src/voice: switch the microphone off (`muted: true`), on (`false`), or toggle it (no `muted`; e.g. a
   * long-press action `{"type":"event","name":"plugin.voice.mute"}`, which publishes `{button, held_ms}`).
   */
  'plugin.voice.mute': { muted?: boolean };
  /**
   * src/voice: a request to the voice pipeline from a button (hal/gpio's one-button mode): `start` listening
   * now, ended by the endpointer (a tap of the button while idle); `cancel` the capture in progress without
   * handing anything on (the press answered the yes/no question the capture was waiting for). `source` names
   * the requester for the logs ("button").
   */
  'plugin.voice.listen': { action: 'start' | 'cancel'; source: string };
}

/** Event payloads of the typed bus. */
export type EventMap = KernelEvents &
  TurnBusEvents &
  PluginEvents & {
    /** A plugin event declared nowhere above: its payload is not known here. */
    [custom: `plugin.${string}`]: unknown;
  };
export type EventType = keyof EventMap;

/**
 * Events the bus retains (MQTT style): the last payload of each is handed to
 * a subscriber at once when it subscribes, so a plugin that starts later
 * still gets the current vocabulary and assistant state.
 */
export const RETAINED_EVENTS: ReadonlySet<EventType> = new Set<EventType>(['plugin.home.vocabulary', 'assistant_state']);
