/**
 * The WebUI's settings (issue 16): where it listens, HTTPS or plain HTTP, the
 * certificate, and how long links and sessions last. Those read only at start
 * carry `restart: true`.
 */
import type { SettingDef } from '../../kernel/settings-types.js';

/** The WebUI plugin's settings. */
export const WEBUI_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.webui.enabled', type: 'boolean', default: true, restart: true, description: 'Serve the WebUI (the Talk, Activity and Settings pages and the HTTP API under /api/v1) on the LAN. Nobody gets in without a link from `homeagent webui link`.' },
  { key: 'plugin.webui.port', type: 'integer', default: 8080, min: 0, max: 65535, restart: true, description: 'TCP port of the WebUI and its HTTP API (0 = any free port).' },
  { key: 'plugin.webui.bind', type: 'string', default: '', restart: true, description: 'Address the WebUI listens on: empty = every address of the box (IPv4 and IPv6); 127.0.0.1 = this machine only (e.g. behind a reverse proxy).' },
  { key: 'plugin.webui.https', type: 'boolean', default: true, restart: true, description: 'Serve over HTTPS (a self-signed certificate for the box\'s names and addresses is made at first start and kept in <data dir>/webui/, unless cert_file and key_file name your own). false = plain HTTP: browsers then give the page no microphone, so push-to-talk is unavailable.' },
  { key: 'plugin.webui.cert_file', type: 'string', default: '', restart: true, description: 'Your own TLS certificate (PEM, with its chain) for the WebUI instead of the self-signed one; set key_file too.' },
  { key: 'plugin.webui.key_file', type: 'string', default: '', restart: true, description: 'The private key (PEM) of plugin.webui.cert_file.' },
  { key: 'plugin.webui.link_ttl_s', type: 'integer', default: 600, min: 30, max: 86400, description: 'How long a one-time link from `homeagent webui link` can be opened, seconds.' },
  { key: 'plugin.webui.session_days', type: 'integer', default: 30, min: 1, max: 3650, description: 'A browser session (or API token) not used for this many days ends; revoke one at once with `homeagent webui revoke ID`.' },
  { key: 'plugin.webui.update_max_mb', type: 'integer', default: 200, min: 1, max: 1024, description: 'Largest release bundle the Health page takes for an update, MB (1,048,576 bytes); a larger upload is refused before it is read.' },
  { key: 'plugin.webui.login_attempts_per_minute', type: 'integer', default: 10, min: 1, max: 1000, description: 'Sign-in attempts (opening a link) one address may make per minute; more are refused with 429 until the minute is over.' },
];
