/**
 * English intent sentence templates: the one definition that feeds both the
 * local intent matcher and the pocketsphinx command grammar. Families and
 * intent names follow Home Assistant's intents repository
 * (home-assistant/intents, sentences/en): locks and covers are HassTurnOn /
 * HassTurnOff with domain lock / cover, scenes, scripts and buttons are
 * HassTurnOn with their domain. Syntax: see template-syntax.ts.
 */
import type { TemplateSet } from './template-syntax.js';
import { COLOURS_EN, GROCERY_ITEMS_EN, WORLD_CITIES } from './builtin-lists.js';

/** Components the on/off sentences address by name. */
export const ON_OFF_DOMAINS = ['light', 'switch', 'fan', 'media_player', 'climate', 'input_boolean'];
/** Components "run/activate/turn on" addresses (HA: scene, script, button HassTurnOn). */
export const ACTIVATABLE = ['scene', 'script', 'button'];
const TEMPERATURE_SOURCES = { domains: ['climate'], sensorClasses: ['temperature'] };

/** Slot marking a match whose name was free words (the `any_name` list), not one of the home's names. */
export const NAME_FREE = 'name_free';

/** The device sentences again with free words for the name; each group marks its matches NAME_FREE. */
const FREE_NAME_SENTENCES: TemplateSet['intents'] = [
  { intent: 'HassTurnOn', slots: { [NAME_FREE]: 1 }, sentences: ['<please> <turn> on [the] {name:any_name}', '<please> <turn> [the] {name:any_name} on'] },
  { intent: 'HassTurnOff', slots: { [NAME_FREE]: 1 }, sentences: ['<please> <turn> off [the] {name:any_name}', '<please> <turn> [the] {name:any_name} off'] },
  { intent: 'HassTurnOn', slots: { [NAME_FREE]: 1, domain: 'lock' }, sentences: ['<please> lock [the] {name:any_name}'] },
  { intent: 'HassTurnOff', slots: { [NAME_FREE]: 1, domain: 'lock' }, sentences: ['<please> unlock [the] {name:any_name}'] },
  { intent: 'HassTurnOn', slots: { [NAME_FREE]: 1, domain: 'cover' }, sentences: ['<please> (open|raise) [the] {name:any_name}'] },
  { intent: 'HassTurnOff', slots: { [NAME_FREE]: 1, domain: 'cover' }, sentences: ['<please> (close|shut|lower) [the] {name:any_name}'] },
  {
    intent: 'HassGetState',
    slots: { [NAME_FREE]: 1 },
    sentences: ['is [the] {name:any_name} [turned] {state:on_off}', 'is [the] {name:any_name} {state:lock_states}', 'is [the] {name:any_name} {state:cover_states}'],
  },
];

/** English templates (language 'en'). */
export const TEMPLATES_EN: TemplateSet = {
  language: 'en',
  rules: {
    turn: '(turn|switch)',
    the_name: '[the] {name}',
    in_area: '(in|on) [the] {area}',
    all: '[all [of]] [the]',
    what_is: "(what's|what is|whats)",
    please: '[please]',
    // A number takes either unit form ("1 hours" is a common slip), an article only the singular ("an hour", "a minute").
    dur_hours: '({hours:1-99} (hour|hours)|{hours:article} hour)',
    dur_minutes: '({minutes:1-99} (minute|minutes)|{minutes:article} minute)',
    dur_seconds: '({seconds:1-99} (second|seconds)|{seconds:article} second)',
    duration:
      '(<dur_hours> [[and] <dur_minutes>] [[and] <dur_seconds>]|<dur_minutes> [[and] <dur_seconds>]|<dur_seconds>|{minutes:half_hour}|{hours:hour_and_half})',
    timer_word: '[the|my|a] [<duration>] timer',
  },
  lists: {
    // The plural addresses every device of the kind there ("the lights in the office", as Home
    // Assistant does). A singular word also fills `device` with the word said, and src/home/resolve.ts
    // finds the one device it means or asks which, never widening it to every light: "the lamp", and
    // "the light" with no room. "The light in the office" is still every light there (the recogniser
    // cannot tell "light" from "lights" reliably, and a room was said).
    domain_words: {
      values: [
        { in: 'light', out: 'light', slots: { device: 'light' } }, { in: 'lights', out: 'light' },
        { in: 'lamp', out: 'light', slots: { device: 'lamp' } }, { in: 'lamps', out: 'light' },
        { in: 'switch', out: 'switch', slots: { device: 'switch' } }, { in: 'switches', out: 'switch' },
        { in: 'fan', out: 'fan', slots: { device: 'fan' } }, { in: 'fans', out: 'fan' },
      ],
    },
    cover_words: {
      values: [
        { in: 'blinds', out: 'cover' }, { in: 'curtains', out: 'cover' },
        { in: 'shades', out: 'cover' }, { in: 'shutters', out: 'cover' }, { in: 'covers', out: 'cover' },
      ],
    },
    article: { values: [{ in: 'a', out: 1 }, { in: 'an', out: 1 }] },
    half_hour: { values: [{ in: 'half an hour', out: 30 }, { in: 'half hour', out: 30 }] },
    hour_and_half: { values: [{ in: 'an hour and a half', out: 1.5 }, { in: 'one and a half hours', out: 1.5 }] },
    on_off: { values: ['on', 'off'] },
    lock_states: { values: ['locked', 'unlocked'] },
    cover_states: { values: ['open', 'closed'] },
    color: { values: COLOURS_EN },
    location: { wildcard: true, grammarValues: WORLD_CITIES },
    item: { wildcard: true, grammarValues: GROCERY_ITEMS_EN },
    // A device name the home does not have, or part of one (FREE_NAME_SENTENCES). In the speech grammar a
    // loop of phones stands here (filler.ts): the decoder can take it for a name it does not know.
    any_name: { wildcard: true, stopWords: ['and', 'then', 'please', 'also'], grammarFiller: true },
  },
  intents: [
    // On / off by area and domain ("turn off all of the lights in the office").
    {
      intent: 'HassTurnOn',
      sentences: [
        '<please> <turn> on <all> {domain:domain_words} [<in_area>]',
        '<please> <turn> on <all> {area} {domain:domain_words}',
        '<please> <turn> <all> {domain:domain_words} on [<in_area>]',
        '<please> <turn> <all> {area} {domain:domain_words} on',
        '[all] [the] {area} {domain:domain_words} on',
      ],
    },
    {
      intent: 'HassTurnOff',
      sentences: [
        '<please> <turn> off <all> {domain:domain_words} [<in_area>]',
        '<please> <turn> off <all> {area} {domain:domain_words}',
        '<please> <turn> <all> {domain:domain_words} off [<in_area>]',
        '<please> <turn> <all> {area} {domain:domain_words} off',
        '[all] [the] {area} {domain:domain_words} off',
      ],
    },
    // On / off by name.
    {
      intent: 'HassTurnOn',
      requires: { domains: ON_OFF_DOMAINS },
      sentences: ['<please> <turn> on <the_name> [<in_area>]', '<please> <turn> <the_name> on', '<the_name> on'],
    },
    {
      intent: 'HassTurnOff',
      requires: { domains: ON_OFF_DOMAINS },
      sentences: ['<please> <turn> off <the_name> [<in_area>]', '<please> <turn> <the_name> off', '<the_name> off'],
    },
    // Locks (HA: lock_HassTurnOn.yaml / lock_HassTurnOff.yaml).
    { intent: 'HassTurnOn', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['<please> lock <the_name> [<in_area>]'] },
    { intent: 'HassTurnOff', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['<please> unlock <the_name> [<in_area>]'] },
    // Covers (HA: cover_HassTurnOn.yaml / cover_HassTurnOff.yaml).
    {
      intent: 'HassTurnOn',
      slots: { domain: 'cover' },
      requires: { domains: ['cover'] },
      sentences: ['<please> (open|raise) <the_name> [<in_area>]'],
    },
    {
      intent: 'HassTurnOff',
      slots: { domain: 'cover' },
      requires: { domains: ['cover'] },
      sentences: ['<please> (close|shut|lower) <the_name> [<in_area>]'],
    },
    { intent: 'HassTurnOn', slots: { domain: 'cover' }, sentences: ['<please> (open|raise) <all> {domain:cover_words} [<in_area>]', '<please> (open|raise) <all> {area} {domain:cover_words}'] },
    { intent: 'HassTurnOff', slots: { domain: 'cover' }, sentences: ['<please> (close|shut|lower) <all> {domain:cover_words} [<in_area>]', '<please> (close|shut|lower) <all> {area} {domain:cover_words}'] },
    {
      intent: 'HassSetPosition',
      requires: { domains: ['cover'] },
      slots: { domain: 'cover' },
      sentences: ['<please> (set|open|close) <the_name> to {position:0-100} percent'],
    },
    // A name in free words where a device name goes (issue 15 "Names"): ranked below every sentence with one
    // of the home's names, rooms or kind words (a wildcard word costs more), and marked `name_free`, so
    // local-intents.ts resolves it by the one resolver's rules: the one device a partial name fits, ask which of
    // several, "I don't know a device called ..." when none; never the nearest other device.
    ...FREE_NAME_SENTENCES,
    // Scenes, scripts, buttons (HA: scene_HassTurnOn.yaml, script_HassTurnOn.yaml).
    {
      intent: 'HassTurnOn',
      requires: { domains: ACTIVATABLE },
      sentences: ['<please> (run|activate|start|trigger|execute|press) <the_name> [scene|script|button]'],
    },
    // Brightness and colour (HA: light_HassLightSet.yaml).
    {
      intent: 'HassLightSet',
      requires: { domains: ['light'] },
      sentences: [
        '<please> (set|change|dim|turn|make) <the_name> [brightness] to {brightness:0-100} [percent] [brightness]',
        '<please> (set|change) [the] brightness of <the_name> to {brightness:0-100} [percent]',
        '<please> (dim|brighten) <the_name> [to] {brightness:0-100} percent',
      ],
    },
    {
      intent: 'HassLightSet',
      slots: { domain: 'light' },
      sentences: [
        '<please> (set|change|dim|turn) <all> {domain:domain_words} <in_area> to {brightness:0-100} [percent] [brightness]',
        '<please> (set|change|dim|turn) <all> {area} {domain:domain_words} [brightness] to {brightness:0-100} [percent] [brightness]',
        '<please> (set|change) [the] {area} brightness to {brightness:0-100} [percent]',
      ],
    },
    {
      intent: 'HassLightSet',
      requires: { domains: ['light'] },
      sentences: ['<please> (set|change|make|turn) <the_name> [to] [the [color|colour]] {color}', '<please> (set|change) [the] (color|colour) of <the_name> to {color}'],
    },
    {
      intent: 'HassLightSet',
      slots: { domain: 'light' },
      sentences: [
        '<please> (set|change|make|turn) <all> {domain:domain_words} <in_area> [to] {color}',
        '<please> (set|change|make|turn) <all> {area} {domain:domain_words} [to] {color}',
      ],
    },
    // State questions (HA: lock_HassGetState.yaml, cover_HassGetState.yaml, homeassistant_HassGetState.yaml).
    { intent: 'HassGetState', slots: { domain: 'lock' }, requires: { domains: ['lock'] }, sentences: ['is <the_name> {state:lock_states}'] },
    { intent: 'HassGetState', slots: { domain: 'cover' }, requires: { domains: ['cover'] }, sentences: ['is <the_name> {state:cover_states}'] },
    { intent: 'HassGetState', requires: { domains: ON_OFF_DOMAINS }, sentences: ['is <the_name> [turned] {state:on_off}'] },
    { intent: 'HassGetState', slots: { domain: 'light' }, sentences: ['(are|is) <all> {domain:domain_words} <in_area> [turned] {state:on_off}', '(are|is) <all> {area} {domain:domain_words} [turned] {state:on_off}'] },
    { intent: 'HassGetState', sentences: ['<what_is> [the] (state|status) of <the_name>'] },
    { intent: 'HassGetState', requires: { domains: ['sensor', 'binary_sensor'] }, sentences: ['<what_is> <the_name> [<in_area>]', 'what does <the_name> say'] },
    // Temperature (HA: climate_HassClimateGetTemperature.yaml / ...SetTemperature.yaml).
    {
      intent: 'HassClimateGetTemperature',
      sentences: ["<what_is> [the] [current] temperature [<in_area>]", "<what_is> it like in [the] {area}", 'how (hot|warm|cold) is it [<in_area>]'],
    },
    {
      intent: 'HassClimateGetTemperature',
      requires: TEMPERATURE_SOURCES,
      sentences: ['<what_is> [the] [current] temperature (of|on|from) <the_name>', '<what_is> <the_name> temperature', 'what temperature is <the_name> [set to]'],
    },
    {
      intent: 'HassClimateSetTemperature',
      sentences: ['<please> (set|change|make) [the] temperature [<in_area>] to {temperature:5-95} [degrees]', '<please> make it {temperature:5-95} degrees [<in_area>]'],
    },
    {
      intent: 'HassClimateSetTemperature',
      requires: { domains: ['climate'] },
      sentences: ['<please> (set|change) <the_name> [temperature] to {temperature:5-95} [degrees]', '<please> (set|change) [the] temperature (of|on) <the_name> to {temperature:5-95} [degrees]'],
    },
    // Timers (HA: homeassistant_HassStartTimer.yaml and friends).
    {
      intent: 'HassStartTimer',
      sentences: ['<please> [(set|start|create|make)] [a|an] timer for <duration>', '<please> [(set|start|create|make)] [a|an] <duration> timer', 'timer <duration>'],
    },
    { intent: 'HassCancelAllTimers', sentences: ['(cancel|stop|delete|remove|clear) all [[of] [the|my]] timers'] },
    { intent: 'HassCancelTimer', sentences: ['(cancel|stop|delete|remove|clear) <timer_word>', '(cancel|stop) [the|my] timer for <duration>'] },
    {
      intent: 'HassTimerStatus',
      sentences: [
        '[(what is|whats|what\'s)] [the] timer status',
        '[what is|whats|what\'s] [the] status of [the|my] (timer|timers)',
        'how (much|long) [time] is left [on [the|my] timer]',
        'how long until [the|my] timer [is done|goes off]',
        'how much time [is] left',
      ],
    },
    // Time and date (HA: homeassistant_HassGetCurrentTime.yaml / ...Date.yaml).
    { intent: 'HassGetCurrentTime', sentences: ['what time is it [now|right now]', '<what_is> the time [now|right now]', 'tell me the time', 'do you know what time it is'] },
    { intent: 'HassGetCurrentDate', sentences: ["<what_is> [the] date [today]", "<what_is> today's date", 'what day is (it|today)', "what's today", 'tell me the date'] },
    // Weather (HA: weather_HassGetWeather.yaml).
    {
      intent: 'HassGetWeather',
      sentences: [
        '<what_is> the weather [like] [today|tomorrow] [(in|for) {location}]',
        "(how's|how is) the weather [today] [(in|for) {location}]",
        "<what_is> the (forecast|weather forecast) [(in|for) {location}]",
        'is it (raining|snowing|sunny|cold|hot) [outside] [in {location}]',
      ],
    },
    // Media (HA: media_player_HassMediaNext.yaml / ...Pause / ...Unpause / ...Previous).
    {
      intent: 'HassMediaNext',
      sentences: ['next [track|song|item|episode]', 'skip [[to] [the] next] [track|song]', 'play [the] next (track|song)'],
    },
    {
      intent: 'HassMediaNext',
      requires: { domains: ['media_player', 'switch'] },
      sentences: ['next [track|song|item] (on|for) <the_name>', 'skip [[to] [the] next] [track|song] (on|for) <the_name>'],
    },
    { intent: 'HassMediaPrevious', sentences: ['previous [track|song|item]', 'go back [(a|one) (track|song)]', 'play [the] previous (track|song)'] },
    { intent: 'HassMediaPause', sentences: ['pause [the] [music|song|track|video|playback|media]', 'stop [the] (music|playback|song)'] },
    { intent: 'HassMediaPause', requires: { domains: ['media_player', 'switch'] }, sentences: ['pause [on] <the_name>'] },
    { intent: 'HassMediaUnpause', sentences: ['(resume|unpause|continue) [the] [music|song|track|video|playback|media]', '(resume|unpause) playing'] },
    { intent: 'HassMediaUnpause', requires: { domains: ['media_player', 'switch'] }, sentences: ['(resume|unpause) [on] <the_name>'] },
    // Lists (HA: shopping_list_HassShoppingListAddItem.yaml, todo_HassListAddItem.yaml).
    { intent: 'HassShoppingListAddItem', sentences: ['<please> (add|put) {item} (to|on) [my|the] shopping list'] },
    { intent: 'HassListAddItem', sentences: ['<please> (add|put) {item} (to|on) [my|the] {list} [list]'] },
    // Nevermind (HA: homeassistant_HassNevermind.yaml).
    { intent: 'HassNevermind', sentences: ['(never mind|nevermind|forget it|cancel that|cancel|nothing)'] },
  ],
};
