/**
 * MCP client plugins (issue 17 "MCP"): placeholder until the client lands;
 * starting one fails with a clear error.
 */
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { HomeAgentError } from '../../kernel/errors.js';
import type { PluginManifest } from './manifest.js';

/** Options of an MCP client plugin. */
export interface McpClientPluginOptions {
  manifest: PluginManifest;
  /** The plugin's folder (holds plugin.json); a stdio server's working directory. */
  dir: string;
}

/** A plugin whose tools come from an MCP server. */
export class McpClientPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  constructor(readonly opts: McpClientPluginOptions) {
    this.name = opts.manifest.name;
  }
  start(_sdk: PluginSDK): void {
    throw new HomeAgentError('PLUGIN_KIND', `plugin ${this.name}: MCP plugins are not built yet`);
  }
}
