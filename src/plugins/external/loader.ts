/**
 * Plugins from outside: finding, checking, approving and (re)loading them
 * (issue 17 "Loading"; seed 001 "Registry.Load(): dispatches by the manifest
 * to the proc / lua / skill channel").
 *
 * Where they live:
 * - `<package>/plugins/<name>/`: shipped with the release (trusted with the
 *   capabilities their manifest asks for);
 * - `<data dir>/plugins/<name>/`: installed by the household (`homeagent
 *   plugins install`); one of these replaces a shipped plugin of the same
 *   name;
 * - `<data dir>/plugins/.held/<name>/`: an update that asks for more
 *   capabilities than were approved, waiting for `plugins approve NAME`
 *   (the approved version goes on running meanwhile).
 *
 * A folder is one plugin: `plugin.json` (manifest.ts), or, for an Agent
 * Skills folder, only a `SKILL.md` (a skill with version 0.0.0). A folder
 * whose manifest does not validate is refused (state `refused`, the message
 * names the field); one for another platform is skipped (`skipped`); one
 * asking for capabilities the household has not approved is `held`. None of
 * them stops the service. Manifest settings join the registry as
 * `plugin.<name>.<key>`.
 *
 * The Plugin objects: process → ProcessPlugin, mcp → McpClientPlugin, lua →
 * LuaPlugin, skill → SkillPlugin, each wrapped in an ExternalPlugin that
 * hands the kind the restricted SDK (restricted-sdk.ts) for the approved
 * capabilities. They join the PluginHost like the built-ins (supervision,
 * back-off, status).
 *
 * Changes (reload, install, approve, remove, enable, disable, restart) run
 * between turns (Agent.betweenTurns): a plugin's tools disappear and
 * reappear between turns, never in the middle of one. A changed Lua plugin
 * loads its new file first; when that fails the old one stays.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { PluginHost, PluginStatus } from '../../kernel/plugin-host.js';
import type { SettingsAPI } from '../../kernel/settings-types.js';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';
import { createLogger } from '../../kernel/log.js';
import { ManifestError, platformMatches, readManifest, validateManifest, type PluginKind, type PluginManifest } from './manifest.js';
import { ApprovalStore, missingCapabilities } from './approvals.js';
import { restrictSdk, type DeviceAccess } from './restricted-sdk.js';
import { ProcessPlugin } from './process.js';
import { McpClientPlugin } from './mcp-client.js';
import { LuaPlugin } from './lua-plugin.js';
import { parseSkill, SkillPlugin, type SkillCatalog } from './skills.js';
import { sandboxAvailable } from './sandbox-probe.js';

/** Where a plugin folder came from. */
export type PluginSource = 'package' | 'data';

/** One plugin folder as `homeagent plugins` lists it. */
export interface ExternalPluginInfo {
  name: string;
  kind?: PluginKind;
  version?: string;
  description?: string;
  source: PluginSource;
  dir: string;
  /**
   * `refused` (manifest invalid), `skipped` (other platform), `held`
   * (waits for approval), `disabled`, or the host's state (`running`,
   * `failed`, `starting`, `stopped`).
   */
  state: string;
  /** Why refused / skipped / held. */
  message?: string;
  /** Capabilities the manifest asks for. */
  asks: string[];
  /** Capabilities approved. */
  capabilities: string[];
  /** Asked for and not approved. */
  missing: string[];
  /** A held update waiting in .held (its version). */
  held_version?: string;
  restarts: number;
  last_error?: string;
  next_restart_at?: number;
  tools: string[];
  /** Process plugins: `enforced` (bubblewrap) or `advisory` (no sandbox here). */
  sandbox?: 'enforced' | 'advisory';
}

/** What the loader needs. */
export interface LoaderDeps {
  dataDir: string;
  /** The package's own plugins folder (INSTALL_ROOT/plugins). */
  packageDir?: string;
  host: PluginHost;
  /** Runs a change between turns (Agent.betweenTurns). */
  betweenTurns: <T>(fn: () => T | Promise<T>) => Promise<T>;
  settings: SettingsAPI;
  approvals: ApprovalStore;
  skills: SkillCatalog;
  devices?: () => DeviceAccess | undefined;
  /** Platform and arch to match manifests against (tests). */
  platform?: string;
  arch?: string;
  /** Whether process plugins are sandboxed here (default: sandboxAvailable()). */
  sandboxed?: () => boolean;
}

/** A folder found by a scan. */
interface Found {
  name: string;
  dir: string;
  source: PluginSource;
  manifest?: PluginManifest;
  error?: string;
  state?: 'refused' | 'skipped' | 'held';
  missing: string[];
  approved: string[];
  fingerprint: string;
}

/** What the loader has put into the host, by name. */
interface Loaded {
  found: Found;
  plugin: ExternalPlugin;
}

/** What `plugins install` found in a folder or archive, before anything is copied. */
export interface InstallPreview {
  name: string;
  version: string;
  kind: PluginKind;
  description?: string;
  asks: string[];
  /** Approved already (an update). */
  approved: string[];
  /** Asked for and not approved yet. */
  missing: string[];
  update: boolean;
  installed_version?: string;
  sandbox?: 'enforced' | 'advisory';
}

/** What an install did. */
export interface InstallResult extends InstallPreview {
  /** `installed` (running or starting), `held` (waits for plugins approve). */
  outcome: 'installed' | 'held';
  state: string;
  message: string;
}

/**
 * A plugin from outside as the host sees it: hands its kind the restricted
 * SDK for the approved capabilities. `inner` is the kind's own object.
 */
export class ExternalPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  constructor(
    readonly inner: Plugin,
    readonly manifest: PluginManifest,
    readonly approved: readonly string[],
    private readonly restrictOpts: { stateDir: string; devices?: () => DeviceAccess | undefined },
  ) {
    this.name = manifest.name;
  }

  start(sdk: PluginSDK): void | Promise<void> {
    // A process plugin's private folder (the only one a sandboxed one may write).
    if (this.manifest.kind === 'process') mkdirSync(this.restrictOpts.stateDir, { recursive: true, mode: 0o700 });
    // An MCP plugin's code is ours: it may ask the household yes/no before a risky tool of its server.
    return this.inner.start(restrictSdk(sdk, this.name, this.approved, { ...this.restrictOpts, confirmations: this.manifest.kind === 'mcp' }));
  }

  stop(): void | Promise<void> {
    return this.inner.stop?.();
  }
}

const log = createLogger('plugins');

/** The loader and manager of plugins from outside. */
export class ExternalPlugins {
  private readonly loaded = new Map<string, Loaded>();
  /** Folders not loaded (refused, skipped, held), from the last scan. */
  private others = new Map<string, Found>();
  readonly pluginsDir: string;
  readonly heldDir: string;
  /** Changes run one at a time (two `plugins` commands at once must not both add a plugin). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: LoaderDeps) {
    this.pluginsDir = path.join(d.dataDir, 'plugins');
    this.heldDir = path.join(this.pluginsDir, '.held');
  }

  /**
   * First load at service start: scan, and add every loadable plugin to the
   * host (started by the kernel's startAll with the built-ins). Never throws
   * for a bad plugin.
   */
  async loadAll(): Promise<ExternalPluginInfo[]> {
    mkdirSync(this.pluginsDir, { recursive: true });
    for (const f of this.scan().values()) {
      if (f.state) {
        this.others.set(f.name, f);
        this.report(f);
        continue;
      }
      const built = this.build(f);
      if (!built) continue;
      this.d.host.add(built);
      this.loaded.set(f.name, { found: f, plugin: built });
      if (this.d.approvals.get(f.name)?.disabled) await this.d.host.setDisabled(f.name, true);
    }
    return this.list();
  }

  /**
   * `plugins reload`: scan again; start new plugins, restart changed ones
   * with their new files, remove those whose folder is gone. Each change
   * runs between turns. A changed Lua plugin whose new file fails to load
   * keeps running the old one (the error is in the result's messages).
   */
  reload(): Promise<{ added: string[]; changed: string[]; removed: string[]; failed: Array<{ name: string; error: string }>; plugins: ExternalPluginInfo[] }> {
    return this.serial(() => this.reloadNow());
  }

  private async reloadNow(): Promise<{ added: string[]; changed: string[]; removed: string[]; failed: Array<{ name: string; error: string }>; plugins: ExternalPluginInfo[] }> {
    const found = this.scan();
    const added: string[] = [];
    const changed: string[] = [];
    const removed: string[] = [];
    const failed: Array<{ name: string; error: string }> = [];
    this.others = new Map();
    for (const [name, cur] of [...this.loaded]) {
      const f = found.get(name);
      if (f?.state === 'refused') {
        // Its new manifest does not validate: the loaded version goes on, like a Lua file that does not load.
        this.others.set(name, f);
        failed.push({ name, error: f.error ?? 'refused' });
        continue;
      }
      if (!f || f.state === 'skipped') {
        await this.d.betweenTurns(() => this.d.host.remove(name));
        this.loaded.delete(name);
        removed.push(name);
        if (f) this.others.set(name, f);
        continue;
      }
      if (f.state === 'held') {
        // Asks for more than approved: the approved version goes on running; listed as held.
        this.others.set(name, f);
        continue;
      }
      if (f.fingerprint === cur.found.fingerprint && sameList(f.approved, cur.found.approved)) continue;
      try {
        await this.replace(cur, f);
        changed.push(name);
      } catch (err) {
        failed.push({ name, error: errorMessage(err) });
        log.error({ plugin: name, err: errorMessage(err) }, 'reload: the changed plugin did not load; the old one stays');
      }
    }
    for (const f of found.values()) {
      if (this.loaded.has(f.name)) continue;
      if (f.state) {
        if (!this.others.has(f.name)) this.others.set(f.name, f);
        continue;
      }
      try {
        await this.addAndStart(f);
        added.push(f.name);
      } catch (err) {
        failed.push({ name: f.name, error: errorMessage(err) });
      }
    }
    return { added, changed, removed, failed, plugins: this.list() };
  }

  /** Every plugin from outside (loaded or not), sorted by name. */
  list(): ExternalPluginInfo[] {
    const status = new Map(this.d.host.status().map((s) => [s.name, s]));
    const out: ExternalPluginInfo[] = [];
    const names = new Set([...this.loaded.keys(), ...this.others.keys(), ...this.heldNames()]);
    for (const name of [...names].sort()) {
      const l = this.loaded.get(name);
      const o = this.others.get(name);
      const f = l?.found ?? o!;
      const held = this.heldManifest(name);
      if (!f && held) {
        out.push({ ...this.describe(held.found, undefined), state: 'held', message: held.found.error ?? `asks for ${held.found.missing.join(', ')}: homeagent plugins approve ${name}` });
        continue;
      }
      const info = this.describe(l ? l.found : f, status.get(name));
      if (o && l && o.state === 'refused') {
        info.message = `the folder's new version is refused (${o.error ?? 'invalid'}); the loaded one goes on`;
      } else if (o && l) {
        info.state = 'held';
        info.message = `the folder's new version asks for ${o.missing.join(', ')}; the approved one runs until homeagent plugins approve ${name}`;
      }
      if (held) {
        info.held_version = held.found.manifest?.version;
        info.message = `update ${held.found.manifest?.version ?? ''} held: it asks for ${held.found.missing.join(', ')}; homeagent plugins approve ${name}`;
        if (!l) info.state = 'held';
      }
      out.push(info);
    }
    return out;
  }

  /** The loaded Plugin object of `name` (ExternalPlugin; its kind's object is `.inner`). */
  get(name: string): ExternalPlugin | undefined {
    return this.loaded.get(name)?.plugin;
  }

  /**
   * Look at a folder or a .tgz before installing: its manifest, the
   * capabilities it asks for, which of them are new. Throws ManifestError
   * naming the field, or PLUGIN_INSTALL for an unusable source.
   */
  preview(source: string): InstallPreview {
    const staged = this.unpack(source);
    try {
      return this.previewOf(staged.dir);
    } finally {
      staged.cleanup();
    }
  }

  /**
   * `plugins install SOURCE`: copy a folder or a .tgz (an npm pack or a tar
   * of the folder) into `<data dir>/plugins/<name>/` and load it between
   * turns. `approve`: the household said yes to what it asks for. Without
   * it, a new plugin or an update asking for more is held (an update's
   * approved version goes on running). Symbolic links in the source are
   * refused.
   */
  install(source: string, approve: boolean): Promise<InstallResult> {
    return this.serial(() => this.installNow(source, approve));
  }

  private async installNow(source: string, approve: boolean): Promise<InstallResult> {
    const staged = this.unpack(source);
    try {
      const p = this.previewOf(staged.dir);
      mkdirSync(this.pluginsDir, { recursive: true });
      if (p.missing.length > 0 && !approve) {
        const dest = path.join(this.heldDir, p.name);
        this.put(staged.dir, dest);
        const message = `${p.name} ${p.version} is held: it asks for ${p.missing.join(', ')}, not approved yet. Approve with: homeagent plugins approve ${p.name}`;
        log.warn({ plugin: p.name, missing: p.missing }, 'plugin install held until approved');
        return { ...p, outcome: 'held', state: this.loaded.has(p.name) ? (this.d.host.status().find((s) => s.name === p.name)?.state ?? 'held') : 'held', message };
      }
      this.put(staged.dir, path.join(this.pluginsDir, p.name));
      rmSync(path.join(this.heldDir, p.name), { recursive: true, force: true });
      if (p.missing.length > 0 || !this.d.approvals.get(p.name)) this.d.approvals.approve(p.name, p.version, p.asks);
      else this.d.approvals.approve(p.name, p.version, this.d.approvals.get(p.name)!.capabilities);
      const r = await this.reloadOne(p.name);
      const state = this.stateOf(p.name);
      return { ...p, outcome: 'installed', state, message: r ?? `${p.name} ${p.version} installed (${state})` };
    } finally {
      staged.cleanup();
    }
  }

  /**
   * `plugins approve NAME`: approve what NAME asks for. A held update
   * replaces the running version; a held folder starts.
   */
  approve(name: string): Promise<ExternalPluginInfo> {
    return this.serial(() => this.approveNow(name));
  }

  private async approveNow(name: string): Promise<ExternalPluginInfo> {
    const held = path.join(this.heldDir, name);
    let manifest: PluginManifest;
    if (existsSync(held)) {
      manifest = readPluginManifest(held, name);
      this.put(held, path.join(this.pluginsDir, name), true);
    } else {
      const f = this.scan().get(name);
      if (!f) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
      if (!f.manifest) throw new HomeAgentError('PLUGIN_MANIFEST', f.error ?? `plugin ${name} has no usable manifest`);
      manifest = f.manifest;
    }
    this.d.approvals.approve(name, manifest.version, manifest.capabilities);
    log.info({ plugin: name, capabilities: manifest.capabilities }, 'plugin capabilities approved');
    await this.reloadOne(name);
    return this.info(name);
  }

  /** `plugins remove NAME`: stop it and delete its folder (installed ones only), its held update and its approval. */
  remove(name: string): Promise<{ removed: string }> {
    return this.serial(() => this.removeNow(name));
  }

  private async removeNow(name: string): Promise<{ removed: string }> {
    const f = this.scan().get(name) ?? this.loaded.get(name)?.found;
    const held = path.join(this.heldDir, name);
    if (!f && !existsSync(held)) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
    if (f?.source === 'package') throw new HomeAgentError('PLUGIN_SHIPPED', `${name} comes with the package and cannot be removed; turn it off with: homeagent plugins disable ${name}`);
    await this.d.betweenTurns(() => this.d.host.remove(name));
    this.loaded.delete(name);
    this.others.delete(name);
    rmSync(path.join(this.pluginsDir, name), { recursive: true, force: true });
    rmSync(held, { recursive: true, force: true });
    this.d.approvals.delete(name);
    return { removed: name };
  }

  /** `plugins enable|disable NAME` (kept across restarts). Works for built-in plugins too. */
  setDisabled(name: string, disabled: boolean): Promise<ExternalPluginInfo | PluginStatus> {
    return this.serial(() => this.setDisabledNow(name, disabled));
  }

  private async setDisabledNow(name: string, disabled: boolean): Promise<ExternalPluginInfo | PluginStatus> {
    if (!this.d.host.status().some((s) => s.name === name)) throw new HomeAgentError('PLUGIN_UNKNOWN', `no running or loadable plugin called "${name}"`);
    this.d.approvals.setDisabled(name, disabled);
    await this.d.betweenTurns(() => this.d.host.setDisabled(name, disabled));
    return this.loaded.has(name) ? this.info(name) : this.d.host.status().find((s) => s.name === name)!;
  }

  /** `plugins restart NAME` (built-in or not), between turns. */
  restart(name: string): Promise<PluginStatus> {
    return this.serial(() => this.restartNow(name));
  }

  private async restartNow(name: string): Promise<PluginStatus> {
    if (!this.d.host.status().some((s) => s.name === name)) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
    await this.d.betweenTurns(() => this.d.host.restart(name));
    return this.d.host.status().find((s) => s.name === name)!;
  }

  /** One plugin's listing. */
  info(name: string): ExternalPluginInfo {
    const i = this.list().find((x) => x.name === name);
    if (!i) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
    return i;
  }

  // ---- internals -----------------------------------------------------------

  /** Run `fn` after every change queued before it. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private stateOf(name: string): string {
    return this.list().find((x) => x.name === name)?.state ?? 'unknown';
  }

  /** Reload only `name` after its folder or approval changed. Resolves with an error message when it did not load. */
  private async reloadOne(name: string): Promise<string | undefined> {
    const f = this.scan().get(name);
    const cur = this.loaded.get(name);
    if (!f) return `plugin ${name} is gone`;
    if (f.state) {
      this.others.set(name, f);
      this.report(f);
      return f.error;
    }
    this.others.delete(name);
    try {
      if (cur) await this.replace(cur, f);
      else await this.addAndStart(f);
      return undefined;
    } catch (err) {
      return errorMessage(err);
    }
  }

  /** Swap a loaded plugin for its new files between turns (a Lua one loads the new file first). */
  private async replace(cur: Loaded, f: Found): Promise<void> {
    const next = this.build(f);
    if (!next) throw new HomeAgentError('PLUGIN_LOAD', `plugin ${f.name} could not be built`);
    if (next.inner instanceof LuaPlugin) next.inner.prepare();
    if (next.inner instanceof SkillPlugin) next.inner.read();
    const disabled = this.d.approvals.get(f.name)?.disabled === true;
    await this.d.betweenTurns(async () => {
      await this.d.host.remove(f.name);
      this.d.host.add(next);
      this.loaded.set(f.name, { found: f, plugin: next });
      if (disabled) await this.d.host.setDisabled(f.name, true);
      else await this.d.host.start(f.name);
    });
  }

  private async addAndStart(f: Found): Promise<void> {
    const p = this.build(f);
    if (!p) throw new HomeAgentError('PLUGIN_LOAD', `plugin ${f.name} could not be built`);
    const disabled = this.d.approvals.get(f.name)?.disabled === true;
    await this.d.betweenTurns(async () => {
      this.d.host.add(p);
      this.loaded.set(f.name, { found: f, plugin: p });
      if (disabled) await this.d.host.setDisabled(f.name, true);
      else await this.d.host.start(f.name);
    });
  }

  /** Build the kind's Plugin and register its settings; undefined (and refused) when its settings do not register. */
  private build(f: Found): ExternalPlugin | undefined {
    const m = f.manifest!;
    try {
      for (const [key, s] of Object.entries(m.settings ?? {})) {
        this.d.settings.register({ key: `plugin.${m.name}.${key}`, type: s.type, default: s.default, description: s.description, ...(s.enum ? { enum: s.enum } : {}), ...(s.min !== undefined ? { min: s.min } : {}), ...(s.max !== undefined ? { max: s.max } : {}) });
      }
    } catch (err) {
      const refused: Found = { ...f, state: 'refused', error: `${path.join(f.dir, 'plugin.json')}: /settings: ${errorMessage(err)}` };
      this.others.set(f.name, refused);
      this.report(refused);
      return undefined;
    }
    const stateDir = path.join(this.d.dataDir, 'plugin-state', m.name);
    let inner: Plugin;
    switch (m.kind) {
      case 'process':
        inner = new ProcessPlugin({ manifest: m, dir: f.dir, stateDir, granted: f.approved, coreSettings: this.d.settings });
        break;
      case 'mcp':
        inner = new McpClientPlugin({ manifest: m, dir: f.dir });
        break;
      case 'lua':
        inner = new LuaPlugin({ manifest: m, dir: f.dir, approved: f.approved });
        break;
      case 'skill':
        inner = new SkillPlugin({ manifest: m, dir: f.dir, catalog: this.d.skills });
        break;
    }
    return new ExternalPlugin(inner, m, f.approved, { stateDir, ...(this.d.devices ? { devices: this.d.devices } : {}) });
  }

  /** Log a folder that is not loaded. */
  private report(f: Found): void {
    if (f.state === 'refused') log.error({ plugin: f.name, dir: f.dir, err: f.error }, 'plugin refused: its manifest does not validate');
    else if (f.state === 'skipped') log.warn({ plugin: f.name, err: f.error }, 'plugin skipped: not for this platform');
    else if (f.state === 'held') log.warn({ plugin: f.name, missing: f.missing }, `plugin held: it asks for capabilities not approved; homeagent plugins approve ${f.name}`);
  }

  /** Every plugin folder, data ones replacing shipped ones of the same name. */
  private scan(): Map<string, Found> {
    const out = new Map<string, Found>();
    const dirs: Array<[string, PluginSource]> = [];
    if (this.d.packageDir) dirs.push([this.d.packageDir, 'package']);
    dirs.push([this.pluginsDir, 'data']);
    for (const [root, source] of dirs) {
      let names: string[];
      try {
        names = readdirSync(root).filter((n) => !n.startsWith('.')).sort();
      } catch {
        continue;
      }
      for (const name of names) {
        const dir = path.join(root, name);
        try {
          if (!lstatSync(dir).isDirectory()) continue;
        } catch {
          continue;
        }
        out.set(name, this.inspect(name, dir, source));
      }
    }
    return out;
  }

  /** One folder: manifest, platform, approvals. */
  private inspect(name: string, dir: string, source: PluginSource): Found {
    const fingerprint = folderFingerprint(dir);
    let manifest: PluginManifest;
    try {
      manifest = readPluginManifest(dir, name);
      checkEntry(manifest, dir);
    } catch (err) {
      return { name, dir, source, state: 'refused', error: errorMessage(err), missing: [], approved: [], fingerprint };
    }
    if (!platformMatches(manifest, this.d.platform, this.d.arch)) {
      return { name, dir, source, manifest, state: 'skipped', error: `for ${manifest.platforms!.join(', ')}; this is ${this.d.platform ?? process.platform}-${this.d.arch ?? process.arch}`, missing: [], approved: [], fingerprint };
    }
    const approved = source === 'package' ? [...manifest.capabilities] : (this.d.approvals.get(name)?.capabilities ?? []).filter((c) => manifest.capabilities.includes(c));
    const missing = missingCapabilities(manifest.capabilities, approved);
    return { name, dir, source, manifest, ...(missing.length > 0 ? { state: 'held' as const, error: `asks for ${missing.join(', ')}, not approved` } : {}), missing, approved, fingerprint };
  }

  private heldNames(): string[] {
    try {
      return readdirSync(this.heldDir).filter((n) => !n.startsWith('.'));
    } catch {
      return [];
    }
  }

  /** A held update's manifest and what it lacks. */
  private heldManifest(name: string): { found: Found } | undefined {
    const dir = path.join(this.heldDir, name);
    if (!existsSync(dir)) return undefined;
    try {
      const m = readPluginManifest(dir, name);
      const approved = (this.d.approvals.get(name)?.capabilities ?? []).filter((c) => m.capabilities.includes(c));
      return { found: { name, dir, source: 'data', manifest: m, state: 'held', missing: missingCapabilities(m.capabilities, approved), approved, fingerprint: '' } };
    } catch (err) {
      return { found: { name, dir, source: 'data', state: 'held', error: errorMessage(err), missing: [], approved: [], fingerprint: '' } };
    }
  }

  private describe(f: Found, s: PluginStatus | undefined): ExternalPluginInfo {
    const m = f.manifest;
    const state = f.state ?? (s?.disabled ? 'disabled' : (s?.state ?? 'stopped'));
    return {
      name: f.name,
      ...(m ? { kind: m.kind, version: m.version, ...(m.description ? { description: m.description } : {}) } : {}),
      source: f.source,
      dir: f.dir,
      state,
      ...(f.error ? { message: f.error } : {}),
      asks: m?.capabilities ?? [],
      capabilities: f.approved,
      missing: f.missing,
      restarts: s?.restarts ?? 0,
      ...(s?.last_error ? { last_error: s.last_error } : {}),
      ...(s?.next_restart_at ? { next_restart_at: s.next_restart_at } : {}),
      tools: s?.tools ?? [],
      ...(m?.kind === 'process' ? { sandbox: this.sandboxed() ? ('enforced' as const) : ('advisory' as const) } : {}),
    };
  }

  /** Whether process plugins are confined here: bubblewrap works and core.plugins.sandbox is not off. */
  private sandboxed(): boolean {
    if (this.d.sandboxed) return this.d.sandboxed();
    let mode = 'auto';
    try {
      mode = this.d.settings.get<string>('core.plugins.sandbox');
    } catch {
      /* not registered: auto */
    }
    return mode !== 'off' && sandboxAvailable().available;
  }

  private previewOf(dir: string): InstallPreview {
    const m = readPluginManifest(dir);
    checkEntry(m, dir);
    const rec = this.d.approvals.get(m.name);
    const installed = this.loaded.get(m.name)?.found.manifest?.version ?? (existsSync(path.join(this.pluginsDir, m.name)) ? rec?.version : undefined);
    const approved = (rec?.capabilities ?? []).filter((c) => m.capabilities.includes(c));
    return {
      name: m.name,
      version: m.version,
      kind: m.kind,
      ...(m.description ? { description: m.description } : {}),
      asks: [...m.capabilities].sort(),
      approved,
      missing: missingCapabilities(m.capabilities, approved),
      update: installed !== undefined || this.loaded.has(m.name),
      ...(installed ? { installed_version: installed } : {}),
      ...(m.kind === 'process' ? { sandbox: this.sandboxed() ? ('enforced' as const) : ('advisory' as const) } : {}),
    };
  }

  /** A source folder or .tgz as a folder holding plugin.json (or SKILL.md); `cleanup` removes what was unpacked. */
  private unpack(source: string): { dir: string; cleanup: () => void } {
    let st;
    try {
      st = statSync(source);
    } catch (err) {
      throw new HomeAgentError('PLUGIN_INSTALL', `cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (st.isDirectory()) return { dir: source, cleanup: () => undefined };
    if (!/\.(tgz|tar\.gz)$/.test(source)) throw new HomeAgentError('PLUGIN_INSTALL', `${source} is neither a folder nor a .tgz archive`);
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'homeagent-plugin-'));
    const cleanup = () => rmSync(tmp, { recursive: true, force: true });
    try {
      // GNU tar refuses members with absolute paths or "..", and we ask it not to keep owners or modes.
      execFileSync('tar', ['-xzf', source, '-C', tmp, '--no-same-owner', '--no-same-permissions'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
    } catch (err) {
      cleanup();
      const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
      throw new HomeAgentError('PLUGIN_INSTALL', `cannot unpack ${source}: ${stderr || errorMessage(err)}`);
    }
    const entries = readdirSync(tmp);
    const hasPlugin = (d: string) => existsSync(path.join(d, 'plugin.json')) || existsSync(path.join(d, 'SKILL.md'));
    let dir = tmp;
    if (!hasPlugin(tmp) && entries.length === 1 && statSync(path.join(tmp, entries[0]!)).isDirectory()) dir = path.join(tmp, entries[0]!);
    if (!hasPlugin(dir)) {
      cleanup();
      throw new HomeAgentError('PLUGIN_INSTALL', `${source} holds no plugin.json (at its top or in its one folder)`);
    }
    return { dir, cleanup };
  }

  /** Copy (or move) `src` to `dest` through a staging folder, replacing `dest` at once. Symbolic links are refused. */
  private put(src: string, dest: string, move = false): void {
    refuseLinks(src);
    mkdirSync(path.dirname(dest), { recursive: true });
    const stage = path.join(path.dirname(dest), `.staging-${path.basename(dest)}-${randomBytes(4).toString('hex')}`);
    if (move) renameSync(src, stage);
    else cpSync(src, stage, { recursive: true });
    const trash = `${stage}.old`;
    if (existsSync(dest)) renameSync(dest, trash);
    renameSync(stage, dest);
    rmSync(trash, { recursive: true, force: true });
  }
}

/**
 * `dir`'s manifest: plugin.json, or for a folder with only SKILL.md, a skill
 * manifest made from its front matter. Throws ManifestError naming the field.
 */
export function readPluginManifest(dir: string, folderName?: string): PluginManifest {
  if (!existsSync(path.join(dir, 'plugin.json')) && existsSync(path.join(dir, 'SKILL.md'))) {
    const file = path.join(dir, 'SKILL.md');
    let doc;
    try {
      doc = parseSkill(readFileSync(file, 'utf8'), file);
    } catch (err) {
      throw new ManifestError(file, errorMessage(err).replace(`${file}: `, ''));
    }
    return validateManifest({ name: doc.name, version: '0.0.0', kind: 'skill', entry: 'SKILL.md', description: doc.description.slice(0, 500) }, file, folderName);
  }
  return readManifest(dir, folderName);
}

/** The entry file of a lua or skill plugin must exist inside its folder. Throws ManifestError naming /entry. */
function checkEntry(m: PluginManifest, dir: string): void {
  if (m.kind !== 'lua' && m.kind !== 'skill') return;
  const file = path.join(dir, 'plugin.json');
  if (typeof m.entry !== 'string') throw new ManifestError(file, `/entry: a ${m.kind} plugin's entry is one file name`);
  if (path.isAbsolute(m.entry) || m.entry.split(/[\\/]/).includes('..')) throw new ManifestError(file, `/entry: "${m.entry}" must be a file inside the plugin's folder`);
  if (!existsSync(path.join(dir, m.entry))) throw new ManifestError(file, `/entry: "${m.entry}" does not exist in ${dir}`);
}

/** Refuse a source holding symbolic links (a link could lead a plugin's files to the box's databases). */
function refuseLinks(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isSymbolicLink()) throw new HomeAgentError('PLUGIN_INSTALL', `the plugin holds a symbolic link (${path.relative(dir, path.join(e.parentPath, e.name))}); copy real files instead`);
  }
}

/** A hash of the folder's file names, sizes and modification times (what reload compares). */
function folderFingerprint(dir: string): string {
  const h = createHash('sha256');
  try {
    const entries = readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .sort()
      .slice(0, 2000);
    for (const f of entries) {
      const st = statSync(f);
      h.update(`${path.relative(dir, f)}\0${st.size}\0${st.mtimeMs}\n`);
    }
  } catch {
    h.update('unreadable');
  }
  return h.digest('hex');
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
}
