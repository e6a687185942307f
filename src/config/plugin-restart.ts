/**
 * Which settings marked *restart* (SettingDef.restart) only their plugin
 * reads, at its own start: `homeagent plugins restart NAME` applies them
 * without restarting the service. The service itself reads the others at
 * its start (plugin.mqtt.url decides the embedded broker; core.* the kernel).
 */

/** Prefixes of restart settings that only their plugin reads at its start, and that plugin's name. */
export const READ_AT_PLUGIN_START: ReadonlyArray<readonly [prefix: string, plugin: string]> = [
  ['plugin.voice.', 'voice'],
  ['plugin.webui.', 'webui'],
  ['plugin.mcp_server.', 'mcp_server'],
  ['plugin.home.', 'home'],
];

/** The plugin whose restart applies `key` ("voice" for plugin.voice.wake_words); undefined when only a service restart does. */
export function pluginApplying(key: string): string | undefined {
  return READ_AT_PLUGIN_START.find(([prefix]) => key.startsWith(prefix))?.[1];
}
