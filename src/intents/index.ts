/**
 * The intent layer's public face: one set of sentence templates (English and
 * Chinese) compiled into the local matcher and the pocketsphinx command
 * grammar. Consumers: src/home (local intents), src/voice/stt (grammar).
 */
export type { IntentMatch, IntentSlots, VocabEntity, Vocabulary } from './types.js';
export { matchIntent, compiledTemplates } from './matcher.js';
export { buildGrammar, GrammarError, type SpeechGrammar } from './grammar.js';
export { wordsToNumber, numberToWords } from './numbers.js';
export { normaliseText, tokenise, type IntentLanguage } from './normalise.js';
export { TEMPLATES_EN } from './templates-en.js';
export { TEMPLATES_ZH } from './templates-zh.js';
export { parseTemplate, TemplateSyntaxError, type TemplateSet, type IntentTemplateGroup, type TemplateNode } from './template-syntax.js';
export { spokenNames } from './slot-lists.js';

/**
 * Every intent name the templates can produce: Home Assistant's built-in intent names, and the box's own
 * where Home Assistant has none (TimerChoice: the answer to "which timer?"; TimerDuration: the answer to "For how long?"; HassListRemoveItem,
 * HassListGetItems, HassListClear: the lists kept on the box).
 */
export const INTENT_NAMES: readonly string[] = [
  'HassTurnOn',
  'HassTurnOff',
  'HassSetPosition',
  'HassLightSet',
  'HassGetState',
  'HassClimateGetTemperature',
  'HassClimateSetTemperature',
  'HassStartTimer',
  'HassCancelTimer',
  'HassCancelAllTimers',
  'HassTimerStatus',
  'HassPauseTimer',
  'HassUnpauseTimer',
  'HassIncreaseTimer',
  'HassDecreaseTimer',
  'TimerChoice',
  'TimerDuration',
  'HassGetCurrentTime',
  'HassGetCurrentDate',
  'HassGetWeather',
  'HassMediaNext',
  'HassMediaPrevious',
  'HassMediaPause',
  'HassMediaUnpause',
  'HassShoppingListAddItem',
  'HassListAddItem',
  'HassShoppingListCompleteItem',
  'HassListCompleteItem',
  'HassListRemoveItem',
  'HassListGetItems',
  'HassListClear',
  'HassNevermind',
];
