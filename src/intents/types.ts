/**
 * Shared shapes of the intent layer: what the home knows (vocabulary), what a
 * sentence means (IntentMatch). One set of sentence templates (src/intents)
 * feeds both the local intent matcher (src/home) and the STT grammar
 * (src/voice/stt), the idea of Home Assistant's hassil + speech-to-phrase.
 * Intent names follow Home Assistant's built-in intents (HassTurnOn,
 * HassTurnOff, HassLightSet, HassGetState, HassClimateGetTemperature,
 * HassStartTimer, HassCancelTimer, HassTimerStatus, HassGetCurrentTime,
 * HassGetCurrentDate, HassGetWeather, HassMediaNext, HassMediaPause,
 * HassMediaUnpause, HassNevermind, HassListAddItem, ...).
 */

/** One controllable or readable thing the box knows, by its spoken name. */
export interface VocabEntity {
  /** Registry id (stable, e.g. the discovery unique_id). */
  id: string;
  /** Spoken name as announced ("Standing Light", "EcoBee", "客厅灯"). */
  name: string;
  /** HA component: light, switch, cover, lock, climate, fan, scene, button, sensor, binary_sensor, media_player, script. */
  domain: string;
  /** Room (HA suggested_area), when known. */
  area?: string;
  /** Other names it answers to. */
  aliases?: string[];
  /** Sensor device_class (temperature, humidity, ...), when known. */
  device_class?: string;
}

/** Everything the matcher and the grammar are filled with; rebuilt when devices change. */
export interface Vocabulary {
  entities: VocabEntity[];
  /** Room names ("Office", "Living Room", "客厅"). */
  areas: string[];
  /** Names of shopping/todo lists, when any. */
  lists?: string[];
}

/** Slot values of a match; numbers are numbers (spoken "fifty percent" -> 50). */
export interface IntentSlots {
  name?: string;
  area?: string;
  /** Domain restriction implied by the words ("lights" -> light). */
  domain?: string;
  /** A singular kind word said in place of a name ("the lamp"): one device of `domain` is meant, not all of them. */
  device?: string;
  /** A cover's kind said in place of a name ("the blinds": HA device_class blind); only devices of that class are meant. */
  device_class?: string;
  brightness?: number;
  color?: string;
  temperature?: number;
  position?: number;
  /** Timer length in seconds. */
  seconds?: number;
  item?: string;
  list?: string;
  location?: string;
  state?: string;
  [extra: string]: string | number | undefined;
}

/** What a sentence means. */
export interface IntentMatch {
  intent: string;
  slots: IntentSlots;
  /** The normalised sentence that matched. */
  text: string;
  /** 'en' | 'zh'. */
  language: string;
  /**
   * Set by a speech engine on a command whose verb it heard but cannot tell
   * from its opposite in this place: [heard, opposite] (['lock', 'unlock']
   * after "and" or "then", whose N can hide the "un"; pocketsphinx-judge.ts
   * HIDDEN_OPPOSITES). The command asks for a yes before it acts, as a risky
   * one does (src/home/local-intents.ts), so saying no to "lock the Front
   * Door?" undoes the mishearing and nothing was done wrong.
   */
  unsure_between?: [string, string];
}
