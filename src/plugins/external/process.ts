/**
 * Process plugins (issue 17 "Process plugins"): placeholder until the
 * JSON-RPC runtime lands; starting one fails with a clear error.
 */
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { HomeAgentError } from '../../kernel/errors.js';
import type { PluginManifest } from './manifest.js';

/** Options of a process plugin: its manifest, its folder and its private state folder. */
export interface ProcessPluginOptions {
  manifest: PluginManifest;
  /** The plugin's folder (holds plugin.json). */
  dir: string;
  /** A private folder the plugin may write (its state). */
  stateDir: string;
}

/** A plugin that runs as a child process speaking JSON-RPC 2.0. */
export class ProcessPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  constructor(readonly opts: ProcessPluginOptions) {
    this.name = opts.manifest.name;
  }
  start(_sdk: PluginSDK): void {
    throw new HomeAgentError('PLUGIN_KIND', `plugin ${this.name}: process plugins are not built yet`);
  }
}
