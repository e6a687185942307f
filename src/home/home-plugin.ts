/**
 * HomePlugin: the smart home over MQTT as one kernel plugin. It owns the
 * MQTT connection, the device registry (HA discovery + zigbee2mqtt), the LLM
 * tools (device_state, device_control), the local intents
 * (on_input short-circuit), confirmation of risky actions (before_toolcall
 * for the LLM path, the same gate for local intents; answered by the next
 * "yes"/"no" input, the button or `confirm()`), and the box's own presence
 * in Home Assistant (stop button, assistant state, last transcript, volume).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import type { StageContext } from '../kernel/stage-types.js';
import { HomeAgentError } from '../kernel/errors.js';
import { detectLanguage } from '../kernel/language.js';
import type { IntentMatch, Vocabulary } from '../intents/types.js';
import { matchIntent } from '../intents/index.js';
import { carriedIntent, carriedIntents, fitsVocabulary } from '../intents/recognised.js';
import { NAME_FREE } from '../intents/templates-en.js';
import { tokenise } from '../intents/normalise.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import type { TimerService } from '../plugins/timers/timer-service.js';
import type { ListService } from '../plugins/lists/list-service.js';
import { LIST_INTENTS, itemWithCommas } from './list-intents.js';
import { boxDiscovery, boxTopics, clipState, type BoxTopics } from './box-entity.js';
import { ConfirmationGate, parseYesNo, unknownRiskyNames } from './confirm.js';
import { normaliseAction, type DeviceAction } from './commands.js';
import { HomeController } from './controller.js';
import type { Entity } from './entities.js';
import { LocalIntents, type IntentMatcher } from './local-intents.js';
import { HomeMqttClient, type MqttTls } from './mqtt-client.js';
import { DeviceRegistry } from './registry.js';
import { actionPhrase, toLang } from './replies.js';
import { HOME_SETTINGS } from './settings.js';
import { StartupRead } from './startup.js';
import { ReportWatch, type MissingReport } from './report-watch.js';
import { FALLBACK_CHANNEL_META } from '../kernel/turn-output.js';
import { WarnLimiter } from './log-limit.js';
import { writeFileAtomic } from './store.js';
import { compoundCuts } from './compound.js';
import { actionFromArgs, confirmationQuestion, findEntity, homeTools, isDeviceControlArgs } from './tools.js';

/** Most commands one typed or spoken sentence is cut into (HomePlugin.compound); more goes to the LLM whole. */
const MAX_COMPOUND_PARTS = 4;
/**
 * Most places a sentence may be cut at (joint words: compound.ts) for it to be
 * tried as commands at all: twice MAX_COMPOUND_PARTS, room for an "and" in a
 * name ("the salt and pepper lamp") or two. Every cut is matched, recursively.
 */
const MAX_COMPOUND_JOINTS = 2 * MAX_COMPOUND_PARTS;

/** What one sentence's cutting already matched (HomePlugin.compound), by parts left, verb lead and text. */
interface CompoundMemo {
  cut: Map<string, Array<{ match: IntentMatch; text: string }> | undefined>;
  match: Map<string, Promise<IntentMatch | null>>;
}

/** The words and intent of a device command in a list, whose verb a later part with none takes (HomePlugin.matchPart). */
interface VerbLead {
  words: string[];
  intent: string;
}

/** `part`'s VerbLead when it is an English command on a device the home has by name; undefined otherwise. */
function verbLead(part: { match: IntentMatch; text: string }, lang: 'en' | 'zh'): VerbLead | undefined {
  const m = part.match;
  if (lang !== 'en' || typeof m.slots.name !== 'string' || m.slots[NAME_FREE] !== undefined) return undefined;
  return { words: tokenise(part.text, 'en'), intent: m.intent };
}

/** A pronoun that stands for devices named before it in one breath: its word, and whether it may stand for several. */
const PRONOUNS_EN: ReadonlyArray<{ re: RegExp; several: boolean }> = [
  { re: /\bit\b/i, several: false },
  { re: /\bthem\b/i, several: true },
];
const PRONOUNS_ZH: ReadonlyArray<{ re: RegExp; several: boolean }> = [
  { re: /它们/, several: true },
  { re: /它/, several: false },
];

/**
 * The words a device named by `m` is said with: its name, and the room it was
 * named with ("the lamp in the bedroom": two devices called Lamp told apart by
 * it). Undefined when `m` names no device the home has (a free name, a room's
 * lights: a pronoun cannot stand for them here).
 */
function referentWords(m: IntentMatch, lang: 'en' | 'zh'): string | undefined {
  const name = m.slots.name;
  if (typeof name !== 'string' || !name || m.slots[NAME_FREE] !== undefined) return undefined;
  const area = typeof m.slots.area === 'string' ? m.slots.area : undefined;
  if (!area) return name;
  return lang === 'zh' ? `${area}的${name}` : `${name} in the ${area}`;
}

/**
 * `part` with its pronoun ("it", "them"; Chinese 它, 它们) standing for the
 * device(s) named just before it in one breath, one sentence per device
 * ("set the ecobee to 22 degrees and turn it on": ["turn ecobee on"]; "turn
 * off the tv and the standing light and turn them on": one for each). "it"
 * is the last part's device; "them" every device of the list the last part
 * ends (parts sharing a verb, or the same command on the same kind of device). Undefined when `part`
 * has no pronoun, or a part it would stand for names no device the home has
 * (a free name or a room's lights stand for nothing). A tester's sentence
 * asked for "a device called the it"; another's "them" turned on only the
 * last of two.
 */
export function withReferents(part: string, before: ReadonlyArray<{ match: IntentMatch; text: string }>, lang: 'en' | 'zh'): string[] | undefined {
  const last = before[before.length - 1];
  if (!last) return undefined;
  const pronoun = (lang === 'zh' ? PRONOUNS_ZH : PRONOUNS_EN).find((p) => p.re.test(part));
  if (!pronoun) return undefined;
  const run: IntentMatch[] = [last.match];
  // "them": back over the list the last part ends: a part whose verb the next one borrowed ("turn off the tv and the
  // standing light"), or one with the same command on the same kind of device ("turn on the tv and turn on the radio").
  // Not a lock said with lights ("turn on the lights and lock the front door and turn them off": HassTurnOn both).
  const borrowed = (p: { match: IntentMatch; text: string }): boolean => tokenise(p.match.text, 'en').length > tokenise(p.text, 'en').length;
  const sameKind = (m: IntentMatch): boolean => m.intent === last.match.intent && m.slots.domain === last.match.slots.domain;
  if (pronoun.several) for (let i = before.length - 2; i >= 0 && (borrowed(before[i + 1]!) || sameKind(before[i]!.match)); i--) run.unshift(before[i]!.match);
  const words = run.map((m) => referentWords(m, lang));
  if (words.some((w) => w === undefined)) return undefined;
  return [...new Set(words as string[])].map((w) => part.replace(pronoun.re, w));
}

/** Constructor options of HomePlugin (all optional). */
export interface HomePluginOptions {
  /**
   * The intent matcher for text that carries no recognised intent (typed
   * input, open-vocabulary speech engines; a grammar recogniser's intent in
   * `meta.stt.intent` is acted on as it is). Default: src/intents
   * `matchIntent` (the templates shared with the STT grammar). Tests inject
   * their own.
   */
  matchIntent?: IntentMatcher;
  /** Where the timers service comes from (the TimersPlugin instance, or a getter). */
  timers?: { readonly service: TimerService | undefined } | (() => TimerService | undefined);
  /** Where the lists service comes from (the ListsPlugin instance, or a getter). */
  lists?: { readonly service: ListService | undefined } | (() => ListService | undefined);
  /** Clock for confirmation timeouts and time/date answers (tests: FakeClock). */
  clock?: Clock;
  /** Broker URL to use instead of plugin.mqtt.url (the service's embedded broker when none is configured). */
  brokerUrl?: () => string | undefined;
  /**
   * Discovery node ids (the topic level after the component) whose devices
   * this box does not take, read when the plugin starts: the demo home's
   * (`demo_home`, src/home/demo-simulator.ts) when it is not announced. Their
   * configs, kept in registry.json from a run that had them or retained on
   * the broker, are dropped (a newcomer's box went on sending "turn on the
   * kitchen light" to the demo's light after `core.service.demo_home off`).
   */
  ignoredNodes?: () => readonly string[];
  /** Connection tuning (tests): first reconnect delay and connect timeout, ms. */
  mqtt?: { reconnectMinMs?: number; connectTimeoutMs?: number; keepaliveS?: number };
  /** Software version announced to Home Assistant. */
  version?: string;
  /**
   * The first read of the home (src/home/startup.ts): quiet period after the
   * last retained message (default 300 ms) and how long an early command
   * waits for it (default 5000 ms); clock default the system clock.
   */
  startup?: { quietMs?: number; maxWaitMs?: number; clock?: Clock };
}

/** See module comment. */
export class HomePlugin implements Plugin {
  readonly name = 'home';
  /** The Home Assistant stop button calls sdk.stop(), which is reserved for kernel-level plugins. */
  readonly kernelLevel = true;
  private sdk: PluginSDK | undefined;
  private reg: DeviceRegistry | undefined;
  private client: HomeMqttClient | undefined;
  private gateRef: ConfirmationGate | undefined;
  private reportWatch: ReportWatch | undefined;
  /** Notices of devices that did not report back, held while a yes/no question is open (flushNotices). */
  private deferredNotices: MissingReport[] = [];
  private ctrl: HomeController | undefined;
  private topics: BoxTopics | undefined;
  private matcher: IntentMatcher | undefined;
  private startupRead: StartupRead | undefined;
  /** Repeated warnings about the box's own command topics, per topic (log-limit.ts). */
  private warnings: WarnLimiter | undefined;
  private readonly unsubs: Array<() => void> = [];

  constructor(private readonly opts: HomePluginOptions = {}) {}

  /** The device registry (after start). */
  get registry(): DeviceRegistry | undefined {
    return this.reg;
  }

  /** The command controller (after start). */
  get controller(): HomeController | undefined {
    return this.ctrl;
  }

  /** The confirmation gate (after start). */
  get gate(): ConfirmationGate | undefined {
    return this.gateRef;
  }

  /** True while connected to the broker. */
  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** True once the broker's retained announcements were read after start (see src/home/startup.ts). */
  get homeRead(): boolean {
    return this.startupRead?.done === true;
  }

  /** The MQTT connection (after start). */
  get mqtt(): HomeMqttClient | undefined {
    return this.client;
  }

  /** Wait (bounded) until the home was read at start-up; at once when it was or the broker is down. */
  private async awaitHome(): Promise<void> {
    const r = this.startupRead;
    if (!r || r.done) return;
    const ok = await r.whenRead(this.opts.startup?.maxWaitMs ?? 5000);
    if (!ok) this.sdk?.log.info({ broker_connected: this.connected }, 'command before the home was read from the broker; going on with what is known');
  }

  /** Answer the open confirmation question (true = yes). Returns false when none is open. */
  confirm(yes: boolean): boolean {
    return this.gateRef?.confirm(yes, 'api') ?? false;
  }

  /** Publish the current vocabulary on the bus (`plugin.home.vocabulary`, retained for late subscribers such as the speech grammar). */
  private emitVocabulary(sdk: PluginSDK, registry: DeviceRegistry): void {
    const vocab = registry.vocabulary();
    sdk.publish('plugin.home.vocabulary', { vocabulary: vocab, entities: vocab.entities.length, areas: vocab.areas });
  }

  private boxNode(sdk: PluginSDK, configured: string): string {
    if (configured.trim()) return configured.trim().replace(/[^a-zA-Z0-9_-]/g, '_');
    const file = path.join(sdk.dataDir, 'home', 'box-id');
    try {
      const id = readFileSync(file, 'utf8').trim();
      if (/^[a-zA-Z0-9_-]+$/.test(id)) return id;
    } catch {
      /* first start */
    }
    const id = `homeagent_${randomBytes(6).toString('hex')}`;
    writeFileAtomic(file, id + '\n');
    return id;
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    const settings = sdk.settings();
    // A protected device's name that fits no device protects nothing: `config set` says so at once (a newcomer's
    // "Kitchen Lite" was warned of only in the log).
    const riskyAdvice = (v: unknown): string | undefined => {
      const entities = this.registry?.entities() ?? [];
      const unknown = entities.length && Array.isArray(v) ? unknownRiskyNames(v.filter((x): x is string => typeof x === 'string'), entities) : [];
      return unknown.length ? `${unknown.map((n) => `"${n}"`).join(', ')} names no device of this home now, so it protects nothing (use a device's id, name or alias as homeagent devices lists them)` : undefined;
    };
    for (const def of HOME_SETTINGS) settings.register(def.key === 'plugin.home.risky_devices' ? { ...def, advise: riskyAdvice } : def);
    const get = <T>(k: string): T => settings.get<T>(k);
    const clock = this.opts.clock ?? systemClock;
    mkdirSync(path.join(sdk.dataDir, 'home'), { recursive: true });
    const node = this.boxNode(sdk, get<string>('plugin.mqtt.client_id'));
    const discoveryPrefix = get<string>('plugin.home.discovery_prefix');
    const topics = boxTopics(get<string>('plugin.mqtt.base_topic'), node);
    this.topics = topics;

    const ignored = this.opts.ignoredNodes?.() ?? [];
    const registry = new DeviceRegistry({
      discoveryPrefix,
      z2mPrefix: get<string>('plugin.home.z2m_prefix'),
      storePath: path.join(sdk.dataDir, 'home', 'registry.json'),
      dataDir: sdk.dataDir,
      maxPayloadBytes: get<number>('plugin.home.max_payload_bytes'),
      log: sdk.log,
      now: () => clock.now(),
      ignoreTopic: (t) => {
        const levels = t.split('/');
        return levels.includes(node) || ignored.some((n) => levels.includes(n));
      },
    });
    registry.load();
    registry.setConnected(false);
    this.reg = registry;

    this.warnings = new WarnLimiter({ log: sdk.log, now: () => clock.now() });
    const startup = new StartupRead({ clock: this.opts.startup?.clock ?? systemClock, ...(this.opts.startup?.quietMs !== undefined ? { quietMs: this.opts.startup.quietMs } : {}) });
    this.startupRead = startup;

    const tlsSetting = get<unknown>('plugin.mqtt.tls');
    const tls = tlsSetting && typeof tlsSetting === 'object' && Object.keys(tlsSetting).length ? (tlsSetting as MqttTls) : undefined;
    const client = new HomeMqttClient(
      {
        url: this.opts.brokerUrl?.() || get<string>('plugin.mqtt.url'),
        username: get<string>('plugin.mqtt.username') || undefined,
        password: get<string>('plugin.mqtt.password') || undefined,
        tls,
        clientId: node,
        availabilityTopic: topics.availability,
        reconnectMinMs: this.opts.mqtt?.reconnectMinMs,
        reconnectMaxMs: get<number>('plugin.mqtt.reconnect_max_ms'),
        connectTimeoutMs: this.opts.mqtt?.connectTimeoutMs,
        keepaliveS: this.opts.mqtt?.keepaliveS,
      },
      {
        log: sdk.log,
        onMessage: (topic, payload, retained) => {
          if (retained) startup.retained();
          this.route(topic, payload, retained);
        },
        onConnectionChange: (up) => {
          registry.setConnected(up);
          startup.connection(up);
          if (up) this.announce();
        },
        onSubscribing: () => startup.subscribing(),
        onSubscribed: () => startup.subscribed(),
      },
    );
    this.client = client;
    // plugin.home.risky_devices names that fit no device protect nothing: say so once per list and home (a newcomer's
    // typo "Kitchn Light", and "Kitchen Light" split into ["Kitchen","Light"], were taken without a word).
    let riskyChecked = '';
    const riskyNames = (): string[] => {
      const v = get<unknown>('plugin.home.risky_devices');
      const names = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
      const entities = registry.entities();
      const key = `${JSON.stringify(names)}|${entities.map((e) => e.id).join(',')}`;
      if (key !== riskyChecked && entities.length > 0) {
        riskyChecked = key;
        const unknown = unknownRiskyNames(names, entities);
        if (unknown.length) {
          sdk.log.warn({ setting: 'plugin.home.risky_devices', unknown }, `plugin.home.risky_devices: ${unknown.map((n) => `"${n}"`).join(', ')} names no device of this home, so it protects nothing (use a device's id, name or alias as homeagent devices lists them)`);
        }
      }
      return names;
    };
    const resubscribe = (): void => client.setSubscriptions([...registry.subscriptions(), topics.stopCommand, topics.volumeCommand]);
    resubscribe();
    this.unsubs.push(
      registry.onChange((c) => {
        if (c.kind === 'state') {
          // The device as `homeagent devices` lists it, for pages that show state live (the WebUI's Devices page).
          const v = registry.view(c.id);
          if (v) sdk.publish('plugin.home.state', { id: v.entity.id, name: v.entity.name, component: v.entity.component, ...(v.entity.area ? { area: v.entity.area } : {}), available: v.available, state: { ...v.state } });
          return;
        }
        resubscribe();
        this.emitVocabulary(sdk, registry);
        sdk.publish('plugin.home.devices', { entities: registry.entities().length });
        riskyNames();
      }),
    );
    // Devices restored from the last run (registry.load) raise no change: announce them now.
    this.emitVocabulary(sdk, registry);
    riskyNames();

    const gate = new ConfirmationGate({
      log: sdk.log,
      clock,
      timeoutMs: () => get<number>('plugin.home.confirm_timeout_ms'),
      ask: (channel, text) => sdk.sendOutput(channel, text, { confirmation: true }),
      // The outcome is no question: the voice box goes back to hearing commands (a timeout's reply reopened the answer grammar).
      tell: (channel, text) => sdk.sendOutput(channel, text),
      // For `homeagent logs`: who asked for what, and how it was settled.
      onDecision: (rec) => {
        sdk.publish('plugin.home.decision', rec);
        // A notice held back while the question was open (reportWatch) is said now.
        this.flushNotices();
      },
    });
    this.gateRef = gate;
    const controller = new HomeController({
      registry,
      publish: async (cmd, timeout) => {
        await client.publishCommand(cmd, timeout, get<number>('plugin.mqtt.broker_down_fail_ms'));
        // What was done, for `homeagent listen`, logs and the LEDs.
        sdk.publish('plugin.home.command', { topic: cmd.topic, payload: cmd.payload });
      },
      log: sdk.log,
      commandTimeoutMs: () => get<number>('plugin.mqtt.command_timeout_ms'),
      riskyDevices: riskyNames,
    });
    this.ctrl = controller;
    // A command the broker took that the device never reported back on is said so (a tester's command during a broker
    // restart was answered "Turned on ..." and lost: the new broker took it before the device had subscribed again).
    const reportWatch = new ReportWatch({
      registry,
      clock,
      timeoutMs: () => get<number>('plugin.home.report_timeout_ms'),
      onMissing: (m) => {
        sdk.log.warn({ entities: m.entities.map((e) => e.id), channel: m.channel }, 'commanded devices did not report back');
        sdk.publish('plugin.home.unreported', { ids: m.entities.map((e) => e.id), names: m.entities.map((e) => e.name), channel: m.channel, text: m.text });
        // Not over an open yes/no question: said once it is settled (spoken over it, a tester's e2e question ran out
        // unanswered and the "no" said next was taken for a command).
        this.deferredNotices.push(m);
        if (!gate.pending) this.flushNotices();
      },
    });
    this.reportWatch = reportWatch;
    const timersOpt = this.opts.timers;
    const timers = (): TimerService | undefined => (typeof timersOpt === 'function' ? timersOpt() : timersOpt?.service);
    const listsOpt = this.opts.lists;
    const lists = (): ListService | undefined => (typeof listsOpt === 'function' ? listsOpt() : listsOpt?.service);
    const intents = new LocalIntents({
      registry, controller, gate, timers, lists, clock, log: sdk.log,
      choiceTimeoutMs: () => get<number>('plugin.home.confirm_timeout_ms'),
      timeZone: () => get<string>('plugin.home.time_zone') || undefined,
      ownArea: () => get<string>('plugin.home.area') || undefined,
      reportWatch,
    });

    this.matcher = this.opts.matchIntent ?? matchIntent;

    const approvals = new Set<string>();
    for (const tool of homeTools({ registry, controller, gate, approvals, reportWatch })) sdk.registerTool(tool);

    sdk.registerStage('on_input', async (ctx: StageContext) => {
      const input = ctx.input;
      // Our own announcement (reportWatch): said as it is.
      if (input.meta?.device_unreported === true) {
        const spoken = typeof input.meta.spoken === 'string' ? input.meta.spoken : input.text;
        // Queued before a yes/no question opened and run while it waits: held again until it is settled (said, it was
        // the last thing heard before the answer, a breaking tester's "yes" then unlocked the door).
        if (gate.pending) {
          this.deferredNotices.push({ entities: [], text: spoken, channel: input.channel });
          ctx.response = '';
          return;
        }
        ctx.response = spoken;
        return;
      }
      if (input.meta?.timer_expired === true || input.channel.startsWith('_')) return;
      const answer = gate.answer(ctx.raw_message, input.channel);
      if (answer) {
        ctx.response = await answer.reply;
        return;
      }
      // Anything else than yes/no on the question's channel while it is open: the person moved on; the risky
      // action is off. Another channel's input is someone else's turn: the question stays open.
      if (gate.pendingOn(input.channel)) gate.cancel();
      else if (gate.pending && parseYesNo(ctx.raw_message) !== undefined) {
        // A yes or no from elsewhere answers nothing here; say where the question waits (a newcomer's console "yes"
        // went to the language model instead).
        const where = gate.open!.channel;
        const named = where === 'speaker' ? 'out loud on the box' : where === 'cli' ? 'on the command line' : where === 'console' ? 'on the console' : where.startsWith('webui') ? 'in the WebUI' : `on ${where}`;
        ctx.response = detectLanguage(ctx.raw_message) === 'zh' ? `这个问题是在 ${where} 上问的，请在那里回答。` : `That question was asked ${named}; answer it there.`;
        return;
      }
      if (!get<boolean>('plugin.home.local_intents')) return;
      // Right after start-up the broker may still be handing over the home: wait for it (bounded).
      await this.awaitHome();
      const vocab = registry.vocabulary();
      // One path from audio to action: the recogniser's match (the same templates) is acted on, not
      // recomputed, while it fits the home; only text without one (typed, an open-vocabulary engine) is matched.
      let match: IntentMatch | null | undefined = carriedIntent(input.meta);
      // Heard, not typed: a command that names no device or room and reaches several asks first (IntentRequest.heard).
      const heard = match != null || carriedIntents(input.meta) !== undefined;
      // What the recogniser doubted stays doubted when the text is matched again below (keepDoubt).
      const recognised = carriedIntents(input.meta) ?? (match ? [match] : []);
      if (match && !fitsVocabulary(match, vocab)) {
        sdk.log.debug({ intent: match.intent, slots: match.slots }, 'the recognised intent names a device or room the home no longer has; matching the text');
        match = undefined;
      }
      if (!match) {
        if (!this.matcher) return;
        const lang = detectLanguage(ctx.raw_message);
        try {
          match = await this.matcher(ctx.raw_message, vocab, lang);
        } catch (err) {
          sdk.log.error({ err }, 'intent matcher failed; leaving the input to the LLM');
          return;
        }
        // A free name that holds a second command ("turn on the tv, lock the front door" read as turning on a
        // device called "tv lock the front door"): the commands, when the text cuts into them.
        if (match && match.slots[NAME_FREE] !== undefined && (await this.compound(ctx.raw_message, vocab))) match = null;
        if (match) match = keepDoubt([{ match, text: ctx.raw_message }], recognised)[0]!.match;
        // Items typed with commas ("add eggs, bread and milk to my shopping list"): the matcher drops punctuation, so
        // the item slot gets the commas typed between its words back (list-intents.ts itemWithCommas).
        if (match && LIST_INTENTS.has(match.intent) && typeof match.slots.item === 'string') {
          const item = itemWithCommas(ctx.raw_message, match.slots.item, match.language === 'zh' ? 'zh' : 'en');
          if (item !== undefined) match = { ...match, slots: { ...match.slots, item } };
        }
      }
      // The answer to "Which one do you mean: ...?" is no command ("the lamp"; "the sliding one" reads as a timer's name).
      if (intents.askingWhichDevice(input.channel) && (!match || (match.intent === 'TimerChoice' && !intents.askingWhichTimer))) {
        // The answer to "Which one do you mean: ...?" ("the lamp"): the command runs on the device it picks.
        try {
          const reply = await intents.answerChoice(ctx.raw_message, { who: input.user ?? input.source, channel: input.channel, signal: ctx.signal });
          if (reply !== undefined) {
            ctx.response = reply;
            if (intents.asking) ctx.response_meta = { expects_reply: true };
            if (gate.pendingOn(input.channel)) ctx.response_meta = { ...ctx.response_meta, confirmation: true };
            return;
          }
        } catch (err) {
          if (err instanceof HomeAgentError) {
            ctx.response = err.message;
            return;
          }
          sdk.log.error({ err }, 'the answer to "which one?" failed; leaving the input to the LLM');
        }
      }
      if (!match) {
        // Two commands in one breath: the recogniser's halves while they fit the home, else the text cut in two;
        // both halves must be sentences of the grammar, else the LLM has it all.
        const carried = carriedIntents(input.meta);
        const cut = carried?.every((m) => fitsVocabulary(m, vocab)) ? carried.map((m) => ({ match: m, text: m.text })) : await this.compound(ctx.raw_message, vocab);
        const parts = cut && keepDoubt(cut, recognised);
        if (!parts) {
          // Not a command: an open "which timer?" question is not being answered.
          intents.forgetQuestion();
          return;
        }
        if (ctx.signal.aborted) return;
        const lang = toLang(parts[0]!.match.language);
        try {
          const reply = await intents.handleAll(parts, { who: input.user ?? input.source, channel: input.channel, lang, signal: ctx.signal, heard });
          if (reply !== undefined) ctx.response = reply;
          // A part asked for a yes: the reply is a confirmation question (the voice box listens for the answer).
          if (reply !== undefined && gate.pendingOn(input.channel)) ctx.response_meta = { ...ctx.response_meta, confirmation: true };
        } catch (err) {
          if (err instanceof HomeAgentError) ctx.response = err.message;
          else sdk.log.error({ err, parts: parts.map((p) => p.match.intent) }, 'local intents failed; leaving the input to the LLM');
        }
        return;
      }
      // Stopped while the matcher ran: this turn acts on nothing.
      if (ctx.signal.aborted) return;
      try {
        const reply = await intents.handle(match, { who: input.user ?? input.source, channel: input.channel, lang: toLang(match.language), signal: ctx.signal, heard });
        if (reply !== undefined) ctx.response = reply;
        // "Which timer do you mean?": the voice box listens for the answer without the wake word.
        if (reply !== undefined && intents.asking) ctx.response_meta = { expects_reply: true };
        // A risky command asked for a yes: the reply is a confirmation question, answered yes or no (the voice box
        // listens for it with its answer grammar, src/intents/answers.ts).
        if (reply !== undefined && gate.pendingOn(input.channel)) ctx.response_meta = { ...ctx.response_meta, confirmation: true };
      } catch (err) {
        // Typed errors carry a message a person can act on (e.g. a timer longer than 7 days); anything else goes to the LLM.
        if (err instanceof HomeAgentError) ctx.response = err.message;
        else sdk.log.error({ err, intent: match.intent }, 'local intent failed; leaving the input to the LLM');
      }
    }, { timeout_ms: get<number>('plugin.mqtt.command_timeout_ms') + 5000 });

    sdk.registerStage('before_toolcall', async (ctx: StageContext) => {
      const call = ctx.tool_call;
      if (!call || !call.function.name.startsWith('device_')) return;
      await this.awaitHome();
      if (call.function.name !== 'device_control') return;
      // Invalid arguments are the registry's to reject after this stage; only a valid call can be risky.
      const args = call.function.arguments;
      if (!isDeviceControlArgs(args)) return;
      let entity: Entity;
      let action: DeviceAction;
      try {
        entity = findEntity(registry, args.device);
        action = actionFromArgs(args);
      } catch {
        return;
      }
      if (!controller.isRisky(entity, action)) return;
      const lang = detectLanguage(ctx.input.text);
      // The turn waits here; the user's spoken/typed answer arrives as a new input,
      // which the kernel hands to this waiter instead of queueing it behind us.
      const answered = new AbortController();
      void sdk
        .awaitInput({ channel: ctx.input.channel, timeout_ms: 2 * get<number>('plugin.home.confirm_timeout_ms'), accept: (t) => parseYesNo(t) !== undefined, signal: answered.signal })
        .then((inp) => {
          if (inp) gate.answer(inp.text, inp.channel);
        });
      const ok = await gate.request({
        who: `${ctx.input.user ?? ctx.input.source} via LLM`,
        what: `${action.action} ${entity.name}`,
        spoken: actionPhrase(entity, normaliseAction(entity, action.action), action, toLang(lang)),
        channel: ctx.input.channel,
        question: confirmationQuestion(entity, action, lang),
        lang,
      });
      answered.abort();
      if (ok) approvals.add(call.id);
      else {
        ctx.deny = true;
        ctx.deny_reason = `The user did not confirm "${action.action} ${entity.name}" (no yes within the time limit), so it was not done.`;
      }
    }, { timeout_ms: 2 * get<number>('plugin.home.confirm_timeout_ms') + 5000 });

    this.unsubs.push(
      sdk.subscribe('plugin.gpio.button', (p) => {
        // A press (or a long press) answers an open question: the stop button says no, any other button yes.
        if (!gate.pending || p.action === 'release') return;
        gate.confirm(p.button !== 'stop', 'button');
      }),
      sdk.subscribe('assistant_state', (p) => client.publish(topics.state, p.state, true)),
      // The voice box has spoken the question (or its "Please say yes or no."): the time to answer starts now.
      sdk.subscribe('plugin.voice.question_spoken', (p) => gate.listening(p.channel)),
      sdk.subscribe('stop', () => {
        // Nothing is said after the stop button, not even that a device stayed silent (dropped before the question's
        // end, which would say the held ones).
        reportWatch.clear();
        this.deferredNotices = [];
        gate.cancel(true);
      }),
      sdk.subscribe('raw_input', (input) => {
        if (input.channel.startsWith('_') || input.meta?.timer_expired === true || input.meta?.device_unreported === true) return;
        client.publish(topics.transcript, clipState(input.text), true);
      }),
      settings.onChange('plugin.speaker.volume', (_k, v) => {
        if (typeof v === 'number') client.publish(topics.volumeState, String(Math.round(v)), true);
      }),
      // Checked when set, not first at the next device command (a newcomer's typo went unnoticed until then).
      settings.onChange('plugin.home.risky_devices', () => void riskyNames()),
    );

    // Start connecting and return: READY never waits for the broker. Commands that arrive before the
    // retained announcements were read wait for them (awaitHome); a broker that is down is logged and retried.
    client.start();
  }

  /**
   * `text` cut at joint words (compound.ts) into MAX_COMPOUND_PARTS or fewer
   * commands that each match, in the order said ("turn on the kitchen
   * lights, turn off the tv and lock the front door": three); undefined
   * when no cut does. A tester's three typed commands joined by "and" went
   * to the LLM: only a cut in two was tried. A part with no verb of its own
   * takes the one before it ("turn on the office ceiling and the desk lamp":
   * VerbLead). `context`: the parts said before `text` in the same sentence
   * (what a pronoun in it stands for: withReferents); `memo`: what this
   * sentence's cutting matched already (each cut's sides are met again and
   * again in the recursion).
   */
  private async compound(
    text: string,
    vocab: Vocabulary,
    parts = MAX_COMPOUND_PARTS,
    lead?: VerbLead,
    memo: CompoundMemo = { cut: new Map(), match: new Map() },
    context: ReadonlyArray<{ match: IntentMatch; text: string }> = [],
  ): Promise<Array<{ match: IntentMatch; text: string }> | undefined> {
    if (!this.matcher || parts < 2) return undefined;
    const lang = detectLanguage(text);
    const leadKey = (l: VerbLead | undefined): string => (l ? `${l.intent}:${l.words.join(' ')}` : '');
    const contextKey = (c: ReadonlyArray<{ match: IntentMatch }>): string => c.map((p) => `${p.match.intent}:${referentWords(p.match, lang) ?? '-'}`).join(',');
    const key = `${parts}|${leadKey(lead)}|${contextKey(context)}|${text}`;
    if (memo.cut.has(key)) return memo.cut.get(key);
    const cuts = compoundCuts(text, lang);
    // Far more joints than commands a sentence may hold: no cut is taken (the LLM has it whole). A tester's 80 "turn
    // on the tv"s joined by "and" held the service for 90 s while every cut was matched, most of them many times.
    if (cuts.length > MAX_COMPOUND_JOINTS) {
      memo.cut.set(key, undefined);
      return undefined;
    }
    const match = async (part: string, l: VerbLead | undefined): Promise<IntentMatch | null> => {
      const k = `match|${leadKey(l)}|${part}`;
      if (!memo.match.has(k)) memo.match.set(k, this.matchPart(part, vocab, lang, l));
      return (await memo.match.get(k)) ?? null;
    };
    // One part as one command (or, with a pronoun, one per device it stands for: withReferents); null when it is none.
    // "it" is a device named before it, never a device called "it"; a name with the word in it ("light it up") is
    // the part as said when the home has that device. The words as said stay the part's text (a reply quotes them).
    const place = async (part: string, l: VerbLead | undefined, before: ReadonlyArray<{ match: IntentMatch; text: string }>): Promise<Array<{ match: IntentMatch; text: string }> | null> => {
      const own = await match(part, l);
      if (own && own.slots[NAME_FREE] === undefined) return [{ match: own, text: part }];
      const sentences = withReferents(part, before, lang);
      if (!sentences) return own ? [{ match: own, text: part }] : null;
      const each = await Promise.all(sentences.map((x) => match(x, l)));
      return each.every((m) => m !== null && m.slots[NAME_FREE] === undefined) ? each.map((m) => ({ match: m!, text: part })) : null;
    };
    let found: Array<{ match: IntentMatch; text: string }> | undefined;
    for (const [a, b] of cuts) {
      // A joint inside a device's name ("the Desk Lamp and Monitor") is no joint: a tester's "turn off the desk lamp and
      // monitor and the tv" switched off the desk lamp and a "Monitor" instead of the device so named.
      if (cutsName(a, b, vocab)) continue;
      try {
        // Each side one command, or itself cut again ("A and B, C": the first side; "A, B, C and D": the second).
        const left = (await place(a, lead, context)) ?? (await this.compound(a, vocab, parts - 1, lead, memo, context));
        if (!left) continue;
        const next = lead ?? verbLead(left[left.length - 1]!, lang);
        const before = [...context, ...left];
        // A rest with a comma is a list first: as one sentence the matcher may take "B, C" for one command with a
        // free name ("turn on the tv lock the front door").
        const list = /[,，;；]/.test(b) ? await this.compound(b, vocab, parts - left.length, next, memo, before) : undefined;
        const right = list ?? (await place(b, next, before)) ?? (await this.compound(b, vocab, parts - left.length, next, memo, before));
        if (right && left.length + right.length <= parts) {
          found = [...left, ...right];
          break;
        }
      } catch (err) {
        this.sdk?.log.error({ err }, 'intent matcher failed on part of a sentence');
        break;
      }
    }
    memo.cut.set(key, found);
    return found;
  }

  /**
   * One part of a list matched as a command; a part that is none on its own
   * ("the desk lamp") is tried behind the first words of `lead`, shortest
   * first ("turn on" + "the desk lamp"), and taken only as `lead`'s intent
   * on a device the home has by that name (no free name). Null when neither.
   */
  private async matchPart(part: string, vocab: Vocabulary, lang: 'en' | 'zh', lead: VerbLead | undefined): Promise<IntentMatch | null> {
    const matcher = this.matcher!;
    const own = await matcher(part, vocab, lang);
    if (own || !lead || lang !== 'en') return own ?? null;
    const words = tokenise(part, 'en');
    for (let k = 1; k < lead.words.length; k++) {
      const m = await matcher([...lead.words.slice(0, k), ...words].join(' '), vocab, 'en');
      if (m && m.intent === lead.intent && typeof m.slots.name === 'string' && m.slots[NAME_FREE] === undefined) return m;
    }
    return null;
  }

  /** Publish the box's discovery and current state (after every connect). */
  private announce(): void {
    const sdk = this.sdk;
    const client = this.client;
    const topics = this.topics;
    if (!sdk || !client || !topics) return;
    const settings = sdk.settings();
    if (!settings.get<boolean>('plugin.home.announce')) return;
    const node = topics.availability.split('/').slice(-2)[0] ?? 'homeagent';
    for (const m of boxDiscovery({
      prefix: settings.get<string>('plugin.home.discovery_prefix'),
      node,
      name: settings.get<string>('plugin.home.box_name'),
      version: this.opts.version ?? '0.1.0',
      topics,
    })) client.publish(m.topic, m.payload, true);
    try {
      const v = settings.get<unknown>('plugin.speaker.volume');
      if (typeof v === 'number') client.publish(topics.volumeState, String(Math.round(v)), true);
    } catch {
      /* the speaker plugin is not running */
    }
  }

  /**
   * Say the held notices of devices that did not report back (reportWatch),
   * each on the channel of its command; a channel that reaches only a caller
   * while it waits (`homeagent ask`) gives way to the speaker, then the
   * console.
   */
  private flushNotices(): void {
    const sdk = this.sdk;
    if (!sdk) return;
    for (const m of this.deferredNotices.splice(0)) {
      const channel = sdk.outputChannel(m.channel)?.perRequest ? 'speaker' : m.channel;
      // Queued, not an interrupt: said after the reply under way, not into it (a tester's long LLM answer was cut
      // for it); a stop cancels it with every queued input.
      sdk
        .injectInput(channel, m.text, { announcement: true, meta: { device_unreported: true, spoken: m.text, [FALLBACK_CHANNEL_META]: ['speaker', 'console'] } })
        .catch((err: unknown) => sdk.log.error({ err }, 'cannot say that devices did not report back'));
    }
  }

  private route(topic: string, payload: Buffer, retained = false): void {
    const sdk = this.sdk;
    const topics = this.topics;
    if (!sdk || !topics) return;
    if (topic === topics.stopCommand) {
      sdk.log.info({ topic }, 'stop requested by Home Assistant');
      try {
        sdk.stop('homeassistant');
      } catch (err) {
        sdk.log.error({ err }, 'stop from Home Assistant failed');
      }
      return;
    }
    if (topic === topics.volumeCommand) {
      // A plain decimal only: Number('') is 0, so an empty payload (how a retained message is cleared) muted the box, and
      // Number('0x32') is 50 (a tester's).
      const text = payload.toString('utf8').trim();
      const v = /^\d{1,3}(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isFinite(v) || v < 0 || v > 100) {
        this.warnings?.warn(topic, { topic, payload: payload.toString('utf8').slice(0, 50) }, 'volume command ignored: not 0-100');
        return;
      }
      try {
        sdk.settings().set('plugin.speaker.volume', Math.round(v));
        this.client?.publish(topics.volumeState, String(Math.round(v)), true);
      } catch (err) {
        sdk.log.warn({ err: (err as Error).message }, 'cannot set plugin.speaker.volume');
      }
      return;
    }
    this.reg?.handleMessage(topic, payload, retained);
  }

  async stop(): Promise<void> {
    for (const u of this.unsubs.splice(0)) u();
    this.reportWatch?.clear();
    this.deferredNotices = [];
    this.startupRead?.close();
    this.gateRef?.cancel();
    await this.client?.stop();
    this.client = undefined;
    this.reg?.flush();
    this.sdk = undefined;
  }
}

/**
 * `parts` (commands matched from the text) with the recogniser's doubt
 * (IntentMatch.unsure_between) of `recognised` (the matches the recogniser
 * carried in the input's meta) kept, so that a doubted command still asks
 * for a yes before it acts. The text is matched again when a carried match
 * names no current device by its whole name ("turn on standing and lock the
 * front door": a part of a name); a newcomer's recording so cut locked the
 * Front Door with no question, though the lock was doubted. Part by part
 * when both hold the same intents in the same order; otherwise every part
 * asks (the doubt cannot be placed, so none is trusted).
 */
export function keepDoubt(parts: Array<{ match: IntentMatch; text: string }>, recognised: readonly IntentMatch[]): Array<{ match: IntentMatch; text: string }> {
  const doubts = recognised.map((m) => m.unsure_between);
  const any = doubts.find((d) => d !== undefined);
  if (!any) return parts;
  const aligned = parts.length === recognised.length && parts.every((p, i) => p.match.intent === recognised[i]!.intent);
  return parts.map((p, i) => {
    const doubt = aligned ? doubts[i] : any;
    return doubt && !p.match.unsure_between ? { ...p, match: { ...p.match, unsure_between: doubt } } : p;
  });
}

/** Lower-case words of `s`, punctuation dropped (for comparing names across a cut). */
function plainWords(s: string): string[] {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim().split(' ').filter(Boolean);
}

/**
 * Whether the cut of a sentence into `a` and `b` (compoundCuts: the joint
 * word dropped between them) falls inside the name or alias of one of
 * `vocab`'s devices: `a` ends with the name's words before one of its joint
 * words ("and", "then") and `b` opens with the words after it ("Desk Lamp
 * and Monitor": "... the desk lamp" | "monitor and the tv"). English names
 * only; a name with no joint word is never cut.
 */
export function cutsName(a: string, b: string, vocab: Vocabulary): boolean {
  const left = plainWords(a);
  const right = plainWords(b);
  for (const e of vocab.entities) {
    for (const n of [e.name, ...(e.aliases ?? [])]) {
      const w = plainWords(n);
      for (let i = 1; i < w.length - 1; i++) {
        if (w[i] !== 'and' && w[i] !== 'then') continue;
        const before = w.slice(0, i);
        const after = w.slice(i + 1);
        const ends = left.length >= before.length && before.every((x, k) => left[left.length - before.length + k] === x);
        const opens = right.length >= after.length && after.every((x, k) => right[k] === x);
        if (ends && opens) return true;
      }
    }
  }
  return false;
}
