/**
 * The restricted SDK of plugins from outside (issue 17 "Restricted SDK";
 * seed 001 "Restricted External Plugin API": internal plugins get the full
 * PluginSDK, external plugins a narrowed surface plus the capabilities their
 * manifest declared and the user approved, checked at the boundary).
 *
 * `restrictSdk(sdk, name, approved)` wraps the host's PluginSDK: every method
 * that reaches beyond the plugin itself checks one capability; a call whose
 * capability was not approved throws PermissionDeniedError (HomeAgentError
 * PERMISSION_DENIED naming the plugin and the capability) and is logged as a
 * warning under `plugin:<name>`. Process, Lua and MCP plugins get this SDK in
 * start(); their RPC/VM boundary calls it, so the check sits in one place.
 *
 *   method                      capability
 *   registerTool                tools
 *   registerStage(stage)        stage:<stage>
 *   subscribe / publish         events:subscribe / events:publish
 *   memory().recall, knowledge().search/list       memory:read
 *   memory().commit, knowledge().create            memory:write
 *   social()                    social:read (writes: never)
 *   devices().list / control    devices:read / devices:control (control passes before_toolcall: risky devices still need the household's yes)
 *   injectInput                 inject:L0 or higher
 *   injectInterrupt(level)      inject:L<level> or higher; L4 is clamped to L3 first
 *   registerOutputChannel, sendOutput   output
 *   registerCommand             commands
 *   settings()                  always; only its own keys plugin.<name>.*
 *   awaitInput, stop, socialWrite        never (kernel and built-in plugins only; awaitInput and a confirmation question for an MCP plugin's risky tool, RestrictOptions.confirmations)
 */
import type { PluginSDK } from '../../kernel/sdk.js';
import type { SettingsAPI } from '../../kernel/settings-types.js';
import type { Level } from '../../kernel/turn-types.js';
import type { KnowledgeAPI, MemoryAPI, SocialReadAPI } from '../../kernel/memory-types.js';
import { HomeAgentError } from '../../kernel/errors.js';
import { maxInjectLevel } from './manifest.js';

/** A call refused because its capability was not approved (code PERMISSION_DENIED). */
export class PermissionDeniedError extends HomeAgentError {
  constructor(
    readonly plugin: string,
    readonly capability: string,
    what: string,
  ) {
    super('PERMISSION_DENIED', `plugin "${plugin}" may not ${what}: capability "${capability}" was not approved (homeagent plugins approve ${plugin} after it asks for it in plugin.json)`);
  }
}

/** One device as a plugin reads it (devices:read). */
export interface DeviceView {
  id: string;
  name: string;
  component: string;
  area?: string;
  available: boolean;
  state: unknown;
}

/**
 * What the box offers plugins of its devices (the app builds it from the home
 * plugin). `control` runs the same `device_control` call the model makes,
 * through before_toolcall (confirmation of risky devices, stop) and the
 * tool's checks; it resolves with the tool's answer text and rejects when the
 * call was denied or failed.
 */
export interface DeviceAccess {
  list(): DeviceView[];
  control(plugin: string, args: { device: string; action: string; value?: unknown }): Promise<string>;
}

/** A plugin's SDK from outside: the PluginSDK surface, checked, plus devices and what it was granted. */
export interface ExternalSDK extends PluginSDK {
  /** The approved capabilities, sorted. */
  readonly capabilities: readonly string[];
  /** Whether `cap` was approved (no logging; for plugin runtimes deciding what to offer). */
  allowed(cap: string): boolean;
  /** The home's devices (devices:read / devices:control per method). */
  devices(): { list(): DeviceView[]; control(args: { device: string; action: string; value?: unknown }): Promise<string> };
}

/** Options of restrictSdk. */
export interface RestrictOptions {
  /** The plugin's own folder for state (`<data dir>/plugin-state/<name>`); handed out as `dataDir`. */
  stateDir?: string;
  /** The devices (absent: devices() calls fail with DEVICES_UNAVAILABLE). */
  devices?: () => DeviceAccess | undefined;
  /**
   * The box's own code in the plugin asks the household yes/no (an MCP
   * server's risky tool, src/plugins/external/mcp-client.ts): awaitInput, a
   * confirmation question (sendOutput with meta.confirmation) and the
   * button's events (plugin.gpio.button) are allowed without further
   * capabilities. Only for kinds whose code is ours (mcp), never for a
   * process or Lua plugin.
   */
  confirmations?: boolean;
}

/**
 * Wrap `sdk` for external plugin `name` with the capabilities it was granted
 * (`approved`; see the module comment for the table). Refusals throw
 * PermissionDeniedError and are logged through `sdk.log`.
 */
export function restrictSdk(sdk: PluginSDK, name: string, approved: readonly string[], opts: RestrictOptions = {}): ExternalSDK {
  const caps = new Set(approved);
  const maxLevel = maxInjectLevel(approved);
  const deny = (capability: string, what: string): never => {
    const err = new PermissionDeniedError(name, capability, what);
    sdk.log.warn({ plugin: name, capability, err: err.message }, 'plugin call refused: capability not approved');
    throw err;
  };
  const need = (capability: string, what: string): void => {
    if (!caps.has(capability)) deny(capability, what);
  };
  const never = (what: string): never => deny('(built-in plugins only)', what);
  const settings = ownSettings(sdk.settings(), name, (key) => deny(`settings:${key}`, `use the setting ${key} (only its own plugin.${name}.* settings)`));
  // The capability is checked before the kernel's API is even looked up.
  const memory = (): MemoryAPI => ({
    recall: (query, limit) => (need('memory:read', 'recall memories'), sdk.memory().recall(query, limit)),
    commit: (triples) => (need('memory:write', 'commit memories'), sdk.memory().commit(triples)),
  });
  const knowledge = (): KnowledgeAPI => ({
    search: (query, limit) => (need('memory:read', 'search the knowledge base'), sdk.knowledge().search(query, limit)),
    list: () => (need('memory:read', 'list the knowledge base'), sdk.knowledge().list()),
    create: (docName, content) => (need('memory:write', 'write to the knowledge base'), sdk.knowledge().create(docName, content)),
  });
  const deviceAccess = (): DeviceAccess => {
    const d = opts.devices?.();
    if (!d) throw new HomeAgentError('DEVICES_UNAVAILABLE', 'the home (devices) is not running');
    return d;
  };
  const ext: ExternalSDK = {
    name,
    log: sdk.log,
    dataDir: opts.stateDir ?? sdk.dataDir,
    capabilities: [...caps].sort(),
    allowed: (cap) => caps.has(cap),
    registerTool: (def) => {
      need('tools', `register the tool "${def.name}"`);
      sdk.registerTool(def);
    },
    unregisterTool: (toolName) => {
      need('tools', `remove the tool "${toolName}"`);
      sdk.unregisterTool(toolName);
    },
    whenIdle: () => sdk.whenIdle(),
    registerStage: (stage, handler, o) => {
      need(`stage:${stage}`, `handle the ${stage} stage`);
      sdk.registerStage(stage, handler, o);
    },
    subscribe: (type, handler) => {
      if (!(opts.confirmations && (type as string) === 'plugin.gpio.button')) need('events:subscribe', `subscribe to "${type}" events`);
      return sdk.subscribe(type, handler);
    },
    publish: (type, payload) => {
      need('events:publish', `publish "${type}" events`);
      sdk.publish(type, payload);
    },
    registerOutputChannel: (ch, c, description, handler, o) => {
      need('output', `register the output channel "${ch}"`);
      sdk.registerOutputChannel(ch, c, description, handler, o);
    },
    injectInput: (channel, text, o) => {
      if (maxLevel < 0) deny('inject:L0', 'inject inputs');
      return sdk.injectInput(channel, text, o);
    },
    injectInterrupt: (level, channel, text, o) => {
      // Seed 001: an external plugin's L4 is clamped to L3 (the host clamps again: external plugins are never kernel-level).
      const clamped = Math.min(Math.max(Number(level) || 1, 1), 3) as Level;
      if (clamped > maxLevel) deny(`inject:L${clamped}`, `raise an L${clamped} interrupt`);
      return sdk.injectInterrupt(clamped, channel, text, o);
    },
    awaitInput: (o) => (opts.confirmations ? sdk.awaitInput(o) : never('take the household\'s next input (awaitInput)')),
    stop: () => never('press stop'),
    registerCommand: (command, handler) => {
      need('commands', `serve the command "${command}"`);
      sdk.registerCommand(command, handler);
    },
    outputChannel: (ch) => sdk.outputChannel(ch),
    sendOutput: (channel, content, meta) => {
      if (!(opts.confirmations && meta?.confirmation === true)) need('output', `send to the "${channel}" channel`);
      return sdk.sendOutput(channel, content, meta);
    },
    crashed: (reason) => sdk.crashed(reason),
    settings: () => settings,
    memory,
    knowledge,
    social: (): SocialReadAPI => {
      need('social:read', 'read the household\'s people');
      return sdk.social();
    },
    socialWrite: () => never('change the household\'s people'),
    devices: () => ({
      list: () => {
        need('devices:read', 'read the devices');
        return deviceAccess().list();
      },
      control: (args) => {
        need('devices:control', `control the device "${String(args?.device)}"`);
        return deviceAccess().control(name, args);
      },
    }),
  };
  return Object.freeze(ext);
}

/**
 * A settings view holding only `plugin.<name>.*`: any other key (API keys,
 * the MQTT password) is refused through `refuse` (which throws).
 */
function ownSettings(s: SettingsAPI, name: string, refuse: (key: string) => never): SettingsAPI {
  const prefix = `plugin.${name}.`;
  const check = (key: string): void => {
    if (typeof key !== 'string' || !key.startsWith(prefix)) refuse(String(key));
  };
  return {
    get: <T>(key: string): T => (check(key), s.get<T>(key)),
    set: (key, value) => (check(key), s.set(key, value)),
    ...(s.setFromString ? { setFromString: (key: string, raw: string) => (check(key), s.setFromString!(key, raw)) } : {}),
    list: (p) => s.list(p && p.startsWith(prefix) ? p : prefix).filter((r) => r.key.startsWith(prefix)),
    delete: (key) => (check(key), s.delete(key)),
    register: (def) => (check(def.key), s.register(def)),
    onChange: (p, cb) => s.onChange(p.startsWith(prefix) ? p : prefix, cb),
  };
}
