/**
 * The manifest of a plugin from outside (issue 17; seed 001 "Plugin System",
 * "Restricted External Plugin API"): `plugin.json` in the plugin's folder,
 * `<data dir>/plugins/<name>/` or the package's own `plugins/<name>/`.
 *
 *   {
 *     "name": "solar",                 // [a-z][a-z0-9_-]{0,39}; equals the folder's name
 *     "version": "1.2.0",
 *     "kind": "process",               // process | lua | skill | mcp
 *     "entry": "main.py",              // process: a file in the folder (run by its #! line, or
 *                                      //   python3 for .py, node for .js/.mjs) or an argv array
 *                                      //   ["python3", "main.py"]; lua: main.lua; skill: SKILL.md;
 *                                      //   mcp: unused (see "mcp")
 *     "description": "Reads the inverter",
 *     "platforms": ["linux"],          // process.platform or platform-arch ("linux-arm64"); absent = any
 *     "capabilities": ["tools", "devices:read", "network"],
 *     "settings": { "host": { "type": "string", "default": "", "description": "Inverter address" } },
 *     "call_timeout_ms": 10000,        // one RPC call's limit; absent = core.plugins.call_timeout_ms
 *     "mcp": { "transport": "stdio", "command": ["npx", "server"], "risky_tools": ["write_file"] }
 *   }
 *
 * Settings join the registry as `plugin.<name>.<key>`. Validation is a JSON
 * Schema (ajv); a manifest that does not validate is refused with a
 * ManifestError naming the field (`/capabilities/2: must be one of ...`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { HomeAgentError } from '../../kernel/errors.js';
import { STAGES } from '../../kernel/stage-types.js';
import type { SettingType } from '../../kernel/settings-types.js';

/** The four kinds of plugin from outside. */
export const PLUGIN_KINDS = ['process', 'lua', 'skill', 'mcp'] as const;
/** A plugin's kind. */
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/**
 * Capabilities a manifest may ask for (issue 17 "Restricted SDK"). What a
 * plugin may do is what it asked for and the user approved at install; every
 * call is checked at the RPC boundary.
 *
 * - `tools`: register tools (prefixed by nothing; a taken name is refused)
 * - `stage:<stage>`: register a handler on that stage (seed 000 §3 stages)
 * - `events:subscribe`, `events:publish`: the event bus
 * - `memory:read`, `memory:write`: the memory API; `social:read`: people (read-only always)
 * - `devices:read`, `devices:control`: the home's devices (control still passes confirmation)
 * - `inject:L0` … `inject:L3`: inject inputs up to that level (L4 is never granted: clamped to L3)
 * - `output`: register an output channel
 * - `network`: the sandbox lets the process reach the network
 * - `commands`: serve a maintenance command on the control socket
 */
export const CAPABILITIES: readonly string[] = [
  'tools',
  ...STAGES.map((s) => `stage:${s}`),
  'events:subscribe',
  'events:publish',
  'memory:read',
  'memory:write',
  'social:read',
  'devices:read',
  'devices:control',
  'inject:L0',
  'inject:L1',
  'inject:L2',
  'inject:L3',
  'output',
  'network',
  'commands',
];

/** One setting a plugin declares; it joins the registry as `plugin.<name>.<key>`. */
export interface ManifestSetting {
  type: SettingType;
  default: unknown;
  description: string;
  enum?: string[];
  min?: number;
  max?: number;
}

/** How an `mcp` plugin reaches its server (issue 17 "MCP"). */
export type McpServerSpec =
  | { transport: 'stdio'; command: string[]; env?: Record<string, string>; risky?: boolean; risky_tools?: string[] }
  | { transport: 'http'; url: string; headers?: Record<string, string>; risky?: boolean; risky_tools?: string[] };

/** A validated `plugin.json`. */
export interface PluginManifest {
  name: string;
  version: string;
  kind: PluginKind;
  entry?: string | string[];
  description?: string;
  platforms?: string[];
  capabilities: string[];
  settings?: Record<string, ManifestSetting>;
  call_timeout_ms?: number;
  mcp?: McpServerSpec;
}

/** A manifest that does not validate (names the field), or that cannot be read. */
export class ManifestError extends HomeAgentError {
  constructor(readonly file: string, message: string) {
    super('PLUGIN_MANIFEST', `${file}: ${message}`);
  }
}

const NAME = '^[a-z][a-z0-9_-]{0,39}$';

const SCHEMA = {
  type: 'object',
  required: ['name', 'version', 'kind'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', pattern: NAME },
    version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.-]+)?$' },
    kind: { enum: [...PLUGIN_KINDS] },
    entry: {
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
      ],
    },
    description: { type: 'string', maxLength: 500 },
    platforms: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)?$' } },
    capabilities: { type: 'array', items: { enum: [...CAPABILITIES] }, uniqueItems: true },
    settings: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
      additionalProperties: {
        type: 'object',
        required: ['type', 'default', 'description'],
        additionalProperties: false,
        properties: {
          type: { enum: ['string', 'number', 'integer', 'boolean', 'json', 'secret'] },
          default: {},
          description: { type: 'string' },
          enum: { type: 'array', items: { type: 'string' } },
          min: { type: 'number' },
          max: { type: 'number' },
        },
      },
    },
    call_timeout_ms: { type: 'integer', minimum: 10, maximum: 600000 },
    mcp: {
      type: 'object',
      required: ['transport'],
      properties: {
        transport: { enum: ['stdio', 'http'] },
        command: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        url: { type: 'string', pattern: '^https?://' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        risky: { type: 'boolean' },
        risky_tools: { type: 'array', items: { type: 'string' } },
      },
      additionalProperties: false,
      if: { properties: { transport: { const: 'stdio' } } },
      then: { required: ['command'] },
      else: { required: ['url'] },
    },
  },
  allOf: [
    { if: { properties: { kind: { const: 'mcp' } } }, then: { required: ['mcp'] } },
    { if: { properties: { kind: { enum: ['process', 'lua', 'skill'] } } }, then: { required: ['entry'] } },
  ],
} as const;

const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile(SCHEMA);

function describe(e: ErrorObject): string {
  const at = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `${at}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
  if (e.keyword === 'required') return `${at}: missing field "${(e.params as { missingProperty: string }).missingProperty}"`;
  if (e.keyword === 'enum') return `${at}: must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
  return `${at}: ${e.message ?? 'invalid'}`;
}

/**
 * Validate a parsed manifest. `file` names it in errors. `folderName`, when
 * given, must equal the manifest's name. Returns the manifest with
 * `capabilities` defaulted to []. Throws ManifestError naming the field.
 */
export function validateManifest(raw: unknown, file: string, folderName?: string): PluginManifest {
  if (!validate(raw)) throw new ManifestError(file, describe(validate.errors![0]!));
  const m = raw as unknown as PluginManifest;
  if (folderName !== undefined && m.name !== folderName) throw new ManifestError(file, `/name: "${m.name}" differs from its folder's name "${folderName}"`);
  for (const [key, s] of Object.entries(m.settings ?? {})) {
    if (s.type === 'secret' && s.default !== '') throw new ManifestError(file, `/settings/${key}/default: a secret's default must be ""`);
  }
  return { ...m, capabilities: m.capabilities ?? [] };
}

/** Read and validate `<dir>/plugin.json`. Throws ManifestError (unreadable, not JSON, invalid). */
export function readManifest(dir: string, folderName?: string): PluginManifest {
  const file = join(dir, 'plugin.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ManifestError(file, `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(file, `not JSON: ${(err as Error).message}`);
  }
  return validateManifest(raw, file, folderName);
}

/** Whether the manifest's `platforms` (absent = any) include this machine (`process.platform` or `platform-arch`). */
export function platformMatches(m: PluginManifest, platform: string = process.platform, arch: string = process.arch): boolean {
  if (!m.platforms || m.platforms.length === 0) return true;
  return m.platforms.some((p) => p === platform || p === `${platform}-${arch}`);
}

/** The highest injection level the capabilities grant (-1 when none). L4 is never granted (issue 17: injected interrupts clamp to L3). */
export function maxInjectLevel(caps: readonly string[]): number {
  let max = -1;
  for (const c of caps) {
    const m = /^inject:L([0-3])$/.exec(c);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max;
}
