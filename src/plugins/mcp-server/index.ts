/**
 * The box's own MCP server (issue 17 "MCP", server half): other agents (an
 * assistant on a laptop, another home agent) use the box's tools over MCP
 * Streamable HTTP at `/mcp` on the WebUI's server (HTTPS by default), with
 * the official SDK's server and StreamableHTTPServerTransport (stateless: a
 * fresh server per request, no MCP session to keep; the low-level `Server`
 * because the box's tools carry JSON Schemas, not zod shapes).
 *
 * - Access: a WebUI bearer token (`homeagent webui link`, then POST
 *   /api/v1/auth/login {"token"} from a script; src/plugins/webui/auth.ts).
 *   Without one: 401. A token made for a person (`webui link --person Anna`)
 *   calls as that person (memory recall shows what that person may see).
 * - Tools offered: device_state, memory_recall, timer (action status), list
 *   (action items): read-only. With plugin.mcp_server.allow_control true also
 *   device_control and every action of timer and list. A call the read-only
 *   server does not allow is refused with a result that says so and names the
 *   setting.
 * - Every call passes the same before_toolcall / after_toolcall stages as a
 *   call of the box's own model: a risky control (unlocking a door, opening
 *   the garage) waits for the household's yes, asked on
 *   plugin.mcp_server.confirm_channel (the speaker by default) exactly as for
 *   a spoken command; the call's result says it was refused when the answer
 *   was no or none came. The stop button ends calls in flight.
 *
 * Off (nothing mounted) when plugin.mcp_server.enabled is false; served only
 * while the WebUI's server runs.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { SettingDef } from '../../kernel/settings-types.js';
import type { KernelServices } from '../../kernel/services.js';
import type { InputMessage } from '../../kernel/turn-types.js';
import type { JsonSchema } from '../../kernel/llm-types.js';
import { newStageContext } from '../../kernel/stages.js';
import { errorMessage } from '../../kernel/errors.js';
import type { SessionRecord } from '../webui/auth.js';
import { readJsonBody, sendError } from '../webui/http.js';
import type { WebUIPlugin } from '../webui/index.js';

/** The path on the WebUI's server. */
export const MCP_PATH = '/mcp';

/** The MCP server's settings. */
export const MCP_SERVER_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.mcp_server.enabled', type: 'boolean', default: true, restart: true, description: "Offer the box's own tools to other agents over MCP (Streamable HTTP) at /mcp on the WebUI's server; needs the WebUI on and a WebUI bearer token (homeagent webui link)." },
  { key: 'plugin.mcp_server.allow_control', type: 'boolean', default: false, description: 'Let MCP clients control devices, set and change timers and change the lists. false = read-only: device state, timer status, list items, memory recall. Risky controls still wait for the household\'s yes.' },
  { key: 'plugin.mcp_server.confirm_channel', type: 'string', default: '', description: "Where the household is asked to confirm a risky control an MCP client requested (the answer is a spoken or typed yes there): empty = the speaker when the voice pipeline runs, else the console." },
];

/** A tool of the box as the MCP server offers it: read-only always, or only some of its actions when read-only. */
interface Exposed {
  name: string;
  /** Read-only: the whole tool is reading. */
  read?: true;
  /** Read-only: only these `action` values (the tool's other actions change things). */
  readActions?: readonly string[];
}

/** The box's tools offered over MCP (see module comment). */
export const EXPOSED_TOOLS: readonly Exposed[] = [
  { name: 'device_state', read: true },
  { name: 'device_control' },
  { name: 'timer', readActions: ['status'] },
  { name: 'list', readActions: ['items'] },
  { name: 'memory_recall', read: true },
];

/** What the plugin needs from the kernel. */
export type McpServerKernel = Pick<KernelServices, 'tools' | 'stages' | 'outputs' | 'clock'>;

/** Options of the MCP server plugin. */
export interface McpServerPluginOptions {
  /** The WebUI whose server and tokens are used. */
  webui: WebUIPlugin;
  /** The kernel's tool registry, stages and output channels (read when a request comes). */
  kernel: () => McpServerKernel;
  /** The version reported to clients. */
  version?: string;
}

/** The tool's parameters with `action` limited to `actions` (a read-only view). Pure. */
function restrictActions(schema: JsonSchema, actions: readonly string[]): JsonSchema {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const action = props.action ?? { type: 'string' };
  return { ...schema, properties: { ...props, action: { ...action, enum: [...actions] } } };
}

/** See module comment. */
export class McpServerPlugin implements Plugin {
  readonly name = 'mcp_server';
  private unmount?: () => void;
  private readonly inFlight = new Set<AbortController>();
  private sdk?: PluginSDK;

  constructor(private readonly opts: McpServerPluginOptions) {}

  /** Whether /mcp is served now. */
  get mounted(): boolean {
    return this.unmount !== undefined;
  }

  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    const s = sdk.settings();
    for (const d of MCP_SERVER_SETTINGS) s.register(d);
    if (!s.get<boolean>('plugin.mcp_server.enabled')) {
      sdk.log.info('MCP server off (plugin.mcp_server.enabled)');
      return;
    }
    // Mounted even while the WebUI is down: it is served from the moment the WebUI's server runs (a WebUI restarted by the supervisor keeps it).
    if (!this.opts.webui.running) sdk.log.warn('the MCP server is served on the WebUI\'s server, which is not running (plugin.webui.enabled, or it failed to start): /mcp answers once it runs');
    this.unmount = this.opts.webui.mount(MCP_PATH, (req, res, session) => this.serve(req, res, session));
    // The stop button ends calls in flight (a confirmation question waiting, a slow device).
    sdk.subscribe('stop', () => {
      for (const c of this.inFlight) c.abort(new Error('stopped'));
    });
    sdk.log.info({ path: MCP_PATH, allow_control: s.get<boolean>('plugin.mcp_server.allow_control') }, 'MCP server on the WebUI\'s server');
  }

  stop(): void {
    this.unmount?.();
    this.unmount = undefined;
    for (const c of this.inFlight) c.abort(new Error('stopped'));
  }

  private allowControl(): boolean {
    return this.sdk!.settings().get<boolean>('plugin.mcp_server.allow_control');
  }

  /** The tools offered now (those registered, read-only views unless control is allowed). */
  listTools(): Tool[] {
    const reg = this.opts.kernel().tools;
    const control = this.allowControl();
    const out: Tool[] = [];
    for (const e of EXPOSED_TOOLS) {
      const def = reg.get(e.name);
      if (!def) continue;
      if (!control && !e.read && !e.readActions) continue;
      const readOnly = !control && (e.read === true || e.readActions !== undefined);
      const params = !control && e.readActions ? restrictActions(def.parameters, e.readActions) : def.parameters;
      out.push({
        name: e.name,
        description: def.description,
        inputSchema: { ...params, type: 'object' } as Tool['inputSchema'],
        annotations: { readOnlyHint: readOnly || e.read === true, openWorldHint: false },
      });
    }
    return out;
  }

  /** Why a call is refused on this server, or undefined when it may run. */
  private refusal(name: string, args: Record<string, unknown>): string | undefined {
    const e = EXPOSED_TOOLS.find((x) => x.name === name);
    if (!e || !this.opts.kernel().tools.has(name)) return `unknown tool "${name}"; tools: ${this.listTools().map((t) => t.name).join(', ')}`;
    if (this.allowControl() || e.read) return undefined;
    if (e.readActions && typeof args.action === 'string' && e.readActions.includes(args.action)) return undefined;
    return `refused: the box's MCP server is read-only, so ${name}${typeof args.action === 'string' ? ` ${args.action}` : ''} is not allowed; a person at the box can allow control with \`homeagent config set plugin.mcp_server.allow_control true\``;
  }

  /** The channel the household is asked on: the setting, else the speaker, else the console; undefined when none is registered. */
  private confirmChannel(): string | undefined {
    const outputs = this.opts.kernel().outputs;
    const set = this.sdk!.settings().get<string>('plugin.mcp_server.confirm_channel').trim();
    if (set) return set;
    return ['speaker', 'console'].find((c) => outputs.get(c) !== undefined);
  }

  /**
   * One tool call from an MCP client: the same path as the model's own call
   * (before_toolcall, the registry's validation and execution,
   * after_toolcall), as an input from `mcp:<session id>` on the confirmation
   * channel, spoken by the token's person.
   */
  async callTool(name: string, args: Record<string, unknown>, session: Pick<SessionRecord, 'id' | 'person'>, signal: AbortSignal): Promise<CallToolResult> {
    const sdk = this.sdk!;
    const fail = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });
    const refused = this.refusal(name, args);
    if (refused) {
      sdk.log.info({ tool: name, session: session.id }, 'MCP call refused (read-only or unknown)');
      return fail(refused);
    }
    const k = this.opts.kernel();
    const channel = this.confirmChannel() ?? 'mcp';
    const input: InputMessage = {
      id: randomUUID(),
      source: `mcp:${session.id}`,
      channel,
      text: '',
      kind: 'queued',
      level: 0,
      received_at: k.clock.now(),
      ...(session.person ? { user: session.person, user_via: 'given' as const } : {}),
      meta: { mcp_session: session.id },
    };
    const ctl = new AbortController();
    const onAbort = (): void => ctl.abort(new Error('the client went away'));
    signal.addEventListener('abort', onAbort, { once: true });
    this.inFlight.add(ctl);
    const callId = `mcp_${randomUUID()}`;
    try {
      const before = newStageContext('before_toolcall', input, { tool_call: { id: callId, type: 'function', function: { name, arguments: structuredClone(args) } }, signal: ctl.signal });
      await k.stages.run(before);
      if (ctl.signal.aborted) return fail(`${name} was not run: stopped`);
      if (before.deny) {
        sdk.log.info({ tool: name, session: session.id }, 'MCP call denied by a safety check');
        return fail(`refused: ${before.deny_reason ?? 'denied by policy'}`);
      }
      const call = before.tool_call ?? { id: callId, type: 'function' as const, function: { name, arguments: args } };
      if (call.function.name !== name) return fail(`refused: a safety check changed the call to ${call.function.name}`);
      const exec = await k.tools.execute(name, call.function.arguments ?? {}, { input, signal: ctl.signal, call_id: callId });
      const after = newStageContext('after_toolcall', input, { tool_call: call, tool_result: { call_id: callId, name, content: exec.content, is_error: exec.is_error }, signal: ctl.signal });
      await k.stages.run(after);
      const result = after.tool_result ?? { content: exec.content, is_error: exec.is_error };
      sdk.log.info({ tool: name, session: session.id, is_error: result.is_error }, 'MCP call');
      return result.is_error ? fail(result.content.replace(/^error: /, '')) : { content: [{ type: 'text', text: result.content }] };
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.inFlight.delete(ctl);
    }
  }

  /** One HTTP request on /mcp (already authenticated by the WebUI). */
  private async serve(req: http.IncomingMessage, res: http.ServerResponse, session: SessionRecord): Promise<void> {
    const server = new Server({ name: 'homeagent', version: this.opts.version ?? '0.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, (r, extra) => this.callTool(r.params.name, (r.params.arguments ?? {}) as Record<string, unknown>, session, extra.signal));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    try {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      this.sdk?.log.warn({ err: errorMessage(err) }, 'MCP request failed');
      sendError(res, err);
    }
  }
}
