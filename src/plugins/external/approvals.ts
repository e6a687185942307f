/**
 * What the household approved for each plugin from outside (issue 17
 * "Restricted SDK": what a plugin may do is what its manifest asks for and
 * the user approved at install; an update that asks for more is held until
 * approved). A versioned JSON store (src/kernel/store-version.ts),
 * `<data dir>/plugin-approvals.json`:
 *
 *   {"schema_version": 1, "approvals": {
 *     "solar": { "capabilities": ["tools", "network"], "version": "1.2.0", "approved_at": 1764584700000, "disabled": false }
 *   }}
 *
 * Capabilities are the manifest's names (manifest.ts CAPABILITIES). A plugin
 * with no record has approved nothing (a folder copied by hand asks like an
 * install: it is held until `homeagent plugins approve NAME`). Plugins the
 * package ships (its own `plugins/` folder) are trusted with what their
 * manifest asks: they come with the release.
 */
import path from 'node:path';
import { readTextIfExists, readVersionedJson, type JsonStoreSpec } from '../../kernel/store-version.js';
import { writeFileAtomic } from '../../home/store.js';

/** The store's spec (version 1: the first). */
export const PLUGIN_APPROVALS_STORE: JsonStoreSpec = {
  store: 'plugin-approvals',
  version: 1,
  key: 'approvals',
  migrations: [{ to: 1, description: 'the first plugin approvals store', up: (p) => p ?? {} }],
};

/** One plugin's record. Times in epoch ms. */
export interface ApprovalRecord {
  /** The capabilities the household approved. */
  capabilities: string[];
  /** The manifest version they were approved for. */
  version: string;
  approved_at: number;
  /** Turned off with `plugins disable` (kept across restarts). */
  disabled?: boolean;
}

/** The approvals store. Reads once; every change is written atomically at once. */
export class ApprovalStore {
  readonly file: string;
  private records: Record<string, ApprovalRecord>;

  /** Open `<dataDir>/plugin-approvals.json`. Throws StoreTooNewError / StoreMigrationError / SyntaxError for a damaged file. */
  constructor(
    readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = path.join(dataDir, 'plugin-approvals.json');
    const r = readVersionedJson(readTextIfExists(this.file), PLUGIN_APPROVALS_STORE, { file: this.file, dataDir });
    if (r.rewrite !== undefined) writeFileAtomic(this.file, r.rewrite);
    const p = r.payload;
    this.records = p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, ApprovalRecord>) : {};
  }

  /** The record of `name`, or undefined. */
  get(name: string): ApprovalRecord | undefined {
    const r = this.records[name];
    return r ? { ...r, capabilities: [...r.capabilities] } : undefined;
  }

  /** Record that `capabilities` were approved for `name` at `version` (replaces the earlier list; keeps `disabled`). */
  approve(name: string, version: string, capabilities: readonly string[]): ApprovalRecord {
    const prev = this.records[name];
    const rec: ApprovalRecord = { capabilities: [...new Set(capabilities)].sort(), version, approved_at: this.now(), ...(prev?.disabled ? { disabled: true } : {}) };
    this.records[name] = rec;
    this.save();
    return { ...rec };
  }

  /** Keep `disabled` for `name` (a plugin without a record gets one with nothing approved). */
  setDisabled(name: string, disabled: boolean): void {
    const prev = this.records[name] ?? { capabilities: [], version: '0.0.0', approved_at: this.now() };
    this.records[name] = { ...prev, ...(disabled ? { disabled: true } : {}) };
    if (!disabled) delete this.records[name]!.disabled;
    this.save();
  }

  /** Forget `name` (`plugins remove`). */
  delete(name: string): void {
    if (!(name in this.records)) return;
    delete this.records[name];
    this.save();
  }

  private save(): void {
    writeFileAtomic(this.file, JSON.stringify({ schema_version: PLUGIN_APPROVALS_STORE.version, [PLUGIN_APPROVALS_STORE.key]: this.records }, null, 1));
  }
}

/** The capabilities in `asked` that `approved` does not hold (sorted). */
export function missingCapabilities(asked: readonly string[], approved: readonly string[] | undefined): string[] {
  const have = new Set(approved ?? []);
  return [...new Set(asked)].filter((c) => !have.has(c)).sort();
}
