/**
 * MCP client plugins (issue 17 "MCP"): a plugin of kind `mcp` connects to an
 * MCP server with the official TypeScript SDK (`@modelcontextprotocol/sdk`)
 * and offers the server's tools to the model.
 *
 * - Transports: `stdio` (the server is a child process started from
 *   `mcp.command` in the plugin's folder, with only the SDK's safe
 *   environment plus `mcp.env`; it is killed when the plugin stops and when
 *   the service exits; systemd's KillMode takes its children) and `http`
 *   (Streamable HTTP at `mcp.url`, with `mcp.headers`). `${key}` in an env
 *   value or a header is replaced by the plugin's setting `plugin.<name>.<key>`
 *   (a secret such as an API token stays out of plugin.json).
 * - Tools: each server tool `t` becomes the model's tool `<plugin name>__t`
 *   (mcpToolName: characters outside [A-Za-z0-9_-] become `_`, cut to 64
 *   with a short hash), in the plugin's tool group (brought in with
 *   tools_load), with the tool's inputSchema as its parameters. A result's
 *   text, resources and links become the tool result; its structured content
 *   when it has no text; its images go to a multimodal model; `isError`
 *   makes a tool error.
 * - Risky tools (`mcp.risky`, a name in `mcp.risky_tools`, or a tool the
 *   server marks `destructiveHint: true`) run only after the household's yes,
 *   asked on the input's channel with the same confirmation gate as a risky
 *   device control (src/home/confirm.ts), answered by voice, text or the
 *   box's button: no answer within
 *   plugin.home.confirm_timeout_ms is a no.
 * - Reconnection: a server that goes away (the child exits, the HTTP server
 *   stops answering) fails the calls in flight with a clear tool error (the
 *   turn goes on) and is reconnected with back-off; when it does not come
 *   back the plugin reports `crashed` and the host restarts it with its own
 *   back-off.
 * - `notifications/tools/list_changed`: the list is read again and the
 *   tools are changed between turns (PluginSDK.whenIdle), never in the
 *   middle of one.
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { ToolContext, ToolDef, ToolOutput } from '../../kernel/stage-types.js';
import type { JsonSchema } from '../../kernel/llm-types.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';
import { detectLanguage } from '../../kernel/language.js';
import { ConfirmationGate, parseYesNo } from '../../home/confirm.js';
import type { McpServerSpec, PluginManifest } from './manifest.js';

/** Options of an MCP client plugin. */
export interface McpClientPluginOptions {
  manifest: PluginManifest;
  /** The plugin's folder (holds plugin.json); a stdio server's working directory. */
  dir: string;
  /**
   * Reconnection after the server went away: `attempts` (default 5) tries,
   * the first at once, then waiting `baseMs` (default 500) doubling; after
   * the last the plugin reports `crashed`.
   */
  reconnect?: { attempts?: number; baseMs?: number };
  /** Clock of the confirmation timeout (tests: FakeClock); default the system clock. */
  clock?: Clock;
}

/** The model's tool names are 1-64 of these (src/kernel/tool-registry.ts). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Longest tool description offered (a server's may be pages long). */
const MAX_DESCRIPTION = 1000;
/** Confirmation wait when plugin.home.confirm_timeout_ms is not registered, ms. */
const DEFAULT_CONFIRM_MS = 30_000;
/** Call limit when neither the manifest nor core.plugins.call_timeout_ms / core.agent.tool_timeout_ms give one, ms. */
const DEFAULT_CALL_MS = 30_000;

/**
 * The model's name of server tool `tool` of plugin `server`:
 * `<server>__<tool>`, characters outside [A-Za-z0-9_-] replaced by `_`; a
 * name longer than 64 is cut and ends in 8 hex digits of the original's
 * SHA-256 (still unique). Pure.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (full.length <= 64 && TOOL_NAME.test(full)) return full;
  const hash = createHash('sha256').update(`${server}__${tool}`).digest('hex').slice(0, 8);
  return `${full.slice(0, 55)}_${hash}`;
}

/** Whether server tool `tool` needs the household's yes: the server or the tool is marked risky in the manifest, or the server marks it destructive. */
export function isRiskyMcpTool(spec: Pick<McpServerSpec, 'risky' | 'risky_tools'>, tool: Pick<Tool, 'name' | 'annotations'>): boolean {
  if (spec.risky === true) return true;
  if (spec.risky_tools?.includes(tool.name)) return true;
  return tool.annotations?.destructiveHint === true && tool.annotations?.readOnlyHint !== true;
}

/**
 * A tool's inputSchema as the registry's parameters: without `$schema`
 * (ajv would look the draft up), an object schema at the root. Pure.
 */
export function mcpParameters(schema: Tool['inputSchema'] | undefined): JsonSchema {
  const { $schema: _drop, ...rest } = (schema ?? {}) as Record<string, unknown>;
  return { ...rest, type: 'object', properties: (rest.properties as Record<string, unknown> | undefined) ?? {} } as JsonSchema;
}

/**
 * The tool result of an MCP call result: text parts joined by newlines,
 * embedded text resources with their URI, binary resources and links named,
 * structured content (JSON) when there is no text, images (base64) as a
 * ToolOutput for a multimodal model. Throws HomeAgentError MCP_TOOL_ERROR
 * with that text when the result is `isError`. Pure.
 */
export function mcpResult(label: string, r: CallToolResult): string | ToolOutput {
  const parts: string[] = [];
  const images: string[] = [];
  let texts = 0;
  for (const c of r.content ?? []) {
    switch (c.type) {
      case 'text':
        parts.push(c.text);
        texts++;
        break;
      case 'image':
        images.push(c.data);
        parts.push(`[image ${c.mimeType}]`);
        break;
      case 'audio':
        parts.push(`[audio ${c.mimeType}, not played]`);
        break;
      case 'resource': {
        const res = c.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        if (typeof res.text === 'string') {
          parts.push(`[resource ${res.uri}]\n${res.text}`);
          texts++;
        } else parts.push(`[resource ${res.uri}${res.mimeType ? ` (${res.mimeType})` : ''}: binary, ${Math.floor(((res.blob ?? '').length * 3) / 4)} bytes]`);
        break;
      }
      case 'resource_link':
        parts.push(`[link ${c.name}: ${c.uri}]`);
        break;
      default:
        break;
    }
  }
  if (texts === 0 && r.structuredContent !== undefined) parts.unshift(JSON.stringify(r.structuredContent));
  const text = parts.join('\n');
  if (r.isError) throw new HomeAgentError('MCP_TOOL_ERROR', `${label} failed: ${text || 'the server gave no reason'}`);
  if (images.length > 0) return { kind: 'tool_output', text: text || 'ok', images };
  return text || 'ok';
}

/** One live connection to the server. */
interface Connection {
  client: Client;
  /** The child's process id (stdio). */
  pid?: number;
}

/** A server tool as registered: the model's name and what it was made from (to see a change). */
interface Registered {
  mcpName: string;
  key: string;
}

/** A plugin whose tools come from an MCP server (see module comment). */
export class McpClientPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  private sdk?: PluginSDK;
  private conn?: Connection;
  private stopping = false;
  private readonly stopCtl = { aborted: false, timers: new Set<NodeJS.Timeout>() };
  private reconnecting?: Promise<void>;
  private readonly registered = new Map<string, Registered>();
  /** A tools/list_changed is being handled; `again`: another came meanwhile. */
  private refreshing = false;
  private refreshAgain = false;
  private gate?: ConfirmationGate;
  private killOnExit?: () => void;
  /** True while a new tool list was read and waits for the turn in progress to end. */
  pendingRefresh = false;
  /** Times the server was connected (1 after start; tests see reconnections). */
  connections = 0;

  constructor(readonly opts: McpClientPluginOptions) {
    this.name = opts.manifest.name;
  }

  private get spec(): McpServerSpec {
    const spec = this.opts.manifest.mcp;
    if (!spec) throw new HomeAgentError('PLUGIN_MANIFEST', `plugin ${this.name}: kind mcp needs an "mcp" section`);
    return spec;
  }

  /** Whether the server is connected now. */
  get connected(): boolean {
    return this.conn !== undefined;
  }

  /** The stdio server's process id, while connected. */
  get pid(): number | undefined {
    return this.conn?.pid;
  }

  /** The model's tool names registered now, in order. */
  get toolNames(): string[] {
    return [...this.registered.keys()];
  }

  /** Connect, list the server's tools and register them. Throws HomeAgentError MCP_CONNECT when the server cannot be reached. */
  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    this.stopping = false;
    this.stopCtl.aborted = false;
    this.registered.clear();
    const settings = sdk.settings();
    let confirmMs = DEFAULT_CONFIRM_MS;
    const confirmTimeout = (): number => {
      try {
        confirmMs = settings.get<number>('plugin.home.confirm_timeout_ms');
      } catch {
        /* the home plugin's settings are not registered: the default */
      }
      return confirmMs;
    };
    this.gate = new ConfirmationGate({ log: sdk.log, clock: this.opts.clock ?? systemClock, timeoutMs: confirmTimeout, ask: (channel, text) => sdk.sendOutput(channel, text, { confirmation: true }) });
    const gate = this.gate;
    try {
      // The box's button answers the open question as it does for a device (any button yes, the stop button no).
      sdk.subscribe('plugin.gpio.button', (p) => {
        if (gate.pending && p.action !== 'release') gate.confirm(p.button !== 'stop', 'button');
      });
    } catch (err) {
      sdk.log.info({ err: errorMessage(err) }, 'the button cannot answer this plugin\'s questions (no events:subscribe); a spoken or typed yes still can');
    }
    await this.connect();
    this.apply(await this.listTools());
  }

  /** Close the connection (a stdio server is ended: stdin closed, then SIGTERM, then SIGKILL). Never throws. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopCtl.aborted = true;
    for (const t of this.stopCtl.timers) clearTimeout(t);
    this.stopCtl.timers.clear();
    this.gate?.cancel(true);
    const conn = this.conn;
    this.conn = undefined;
    await this.close(conn);
    this.registered.clear();
  }

  // ---- connection -------------------------------------------------------------

  /** `${key}` in a manifest string replaced by the plugin's setting plugin.<name>.<key> ('' when it has none). */
  private expand(value: string): string {
    const settings = this.sdk!.settings();
    return value.replace(/\$\{([a-z][a-z0-9_]*)\}/g, (_m, key: string) => {
      try {
        const v = settings.get<unknown>(`plugin.${this.name}.${key}`);
        return v === undefined || v === null ? '' : String(v);
      } catch {
        this.sdk!.log.warn({ key: `plugin.${this.name}.${key}` }, 'plugin.json names a setting the plugin does not declare; using ""');
        return '';
      }
    });
  }

  private async connect(): Promise<void> {
    const sdk = this.sdk!;
    const spec = this.spec;
    const client = new Client({ name: 'homeagent', version: '1' }, { capabilities: {} });
    let pid: number | undefined;
    try {
      if (spec.transport === 'stdio') {
        const [cmd, ...args] = spec.command;
        const env = Object.fromEntries(Object.entries(spec.env ?? {}).map(([k, v]) => [k, this.expand(v)]));
        const transport = new StdioClientTransport({ command: cmd === 'node' ? process.execPath : cmd!, args, env, cwd: this.opts.dir, stderr: 'pipe' });
        const stderr = transport.stderr;
        if (stderr) {
          createInterface({ input: stderr as unknown as NodeJS.ReadableStream }).on('line', (line) => sdk.log.info({ stderr: line.slice(0, 1000) }, 'MCP server stderr'));
        }
        await client.connect(transport, { timeout: this.callTimeoutMs() });
        pid = transport.pid ?? undefined;
      } else {
        const headers = Object.fromEntries(Object.entries(spec.headers ?? {}).map(([k, v]) => [k, this.expand(v)]));
        const transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers } });
        await client.connect(transport, { timeout: this.callTimeoutMs() });
      }
    } catch (err) {
      await client.close().catch(() => undefined);
      const where = spec.transport === 'stdio' ? `command ${JSON.stringify(spec.command)}` : spec.url;
      throw new HomeAgentError('MCP_CONNECT', `MCP server of plugin ${this.name} (${where}) cannot be reached: ${errorMessage(err)}`, { cause: err });
    }
    if (this.stopping) {
      await client.close().catch(() => undefined);
      throw new HomeAgentError('MCP_STOPPED', `plugin ${this.name} stopped while connecting`);
    }
    const conn: Connection = { client, ...(pid !== undefined ? { pid } : {}) };
    this.conn = conn;
    this.connections++;
    client.onclose = () => {
      if (this.conn === conn) this.lost('the connection closed');
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.conn === conn) this.refresh();
    });
    if (pid !== undefined) this.armKillOnExit(pid);
    sdk.log.info({ transport: spec.transport, server: client.getServerVersion()?.name, ...(pid !== undefined ? { pid } : {}) }, 'MCP server connected');
  }

  /** A stdio child dies with the service: killed when this process exits (systemd's KillMode takes its own children). */
  private armKillOnExit(pid: number): void {
    if (this.killOnExit) process.off('exit', this.killOnExit);
    this.killOnExit = () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    process.on('exit', this.killOnExit);
  }

  private async close(conn: Connection | undefined): Promise<void> {
    if (this.killOnExit) {
      process.off('exit', this.killOnExit);
      this.killOnExit = undefined;
    }
    if (!conn) return;
    conn.client.onclose = undefined;
    await conn.client.close().catch((err: unknown) => this.sdk?.log.warn({ err: errorMessage(err) }, 'MCP server close failed'));
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (ms <= 0 || this.stopCtl.aborted) return resolve();
      const t = setTimeout(() => {
        this.stopCtl.timers.delete(t);
        resolve();
      }, ms);
      this.stopCtl.timers.add(t);
    });
  }

  /**
   * The server went away: drop the connection and reconnect with back-off;
   * the tools stay registered (calls meanwhile get a clear error) and are
   * brought up to date between turns. When every attempt fails the plugin
   * reports `crashed` (the host restarts it with its own back-off).
   */
  private lost(reason: string): void {
    if (this.stopping || this.reconnecting) return;
    const sdk = this.sdk!;
    const old = this.conn;
    this.conn = undefined;
    sdk.log.warn({ reason }, 'MCP server went away; reconnecting');
    const attempts = this.opts.reconnect?.attempts ?? 5;
    const base = this.opts.reconnect?.baseMs ?? 500;
    this.reconnecting = (async () => {
      await this.close(old);
      let last: unknown;
      for (let i = 0; i < attempts; i++) {
        await this.wait(i === 0 ? 0 : base * 2 ** (i - 1));
        if (this.stopping) return;
        try {
          await this.connect();
          const tools = await this.listTools();
          await this.applyBetweenTurns(tools);
          sdk.log.info({ attempt: i + 1 }, 'MCP server reconnected');
          return;
        } catch (err) {
          last = err;
          const conn = this.conn;
          this.conn = undefined;
          await this.close(conn);
          sdk.log.warn({ attempt: i + 1, of: attempts, err: errorMessage(err) }, 'MCP server reconnection failed');
        }
      }
      if (!this.stopping) sdk.crashed(`the MCP server went away (${reason}) and did not come back after ${attempts} attempts: ${errorMessage(last)}`);
    })().finally(() => {
      this.reconnecting = undefined;
    });
  }

  // ---- tools ------------------------------------------------------------------

  private callTimeoutMs(): number {
    if (this.opts.manifest.call_timeout_ms !== undefined) return this.opts.manifest.call_timeout_ms;
    const settings = this.sdk!.settings();
    for (const key of ['core.plugins.call_timeout_ms', 'core.agent.tool_timeout_ms']) {
      try {
        const v = settings.get<number>(key);
        if (typeof v === 'number' && v > 0) return v;
      } catch {
        /* not registered */
      }
    }
    return DEFAULT_CALL_MS;
  }

  /** Every tool the server lists (all pages). */
  private async listTools(): Promise<Tool[]> {
    const conn = this.conn;
    if (!conn) throw new HomeAgentError('MCP_SERVER_GONE', `the MCP server of plugin ${this.name} is not connected`);
    const out: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await conn.client.listTools(cursor ? { cursor } : {}, { timeout: this.callTimeoutMs() });
      out.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  /** tools/list_changed: read the list again now, change the tools between turns. */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.refreshAgain = false;
          const tools = await this.listTools();
          await this.applyBetweenTurns(tools);
        } while (this.refreshAgain && !this.stopping);
      } catch (err) {
        this.sdk?.log.warn({ err: errorMessage(err) }, 'MCP tool list could not be read again');
      } finally {
        this.refreshing = false;
      }
    })();
  }

  /** Wait until no turn runs, then apply `tools` at once (nothing awaits in between, so no turn starts meanwhile). */
  private async applyBetweenTurns(tools: Tool[]): Promise<void> {
    this.pendingRefresh = true;
    try {
      await this.sdk!.whenIdle();
      if (!this.stopping) this.apply(tools);
    } finally {
      this.pendingRefresh = false;
    }
  }

  /**
   * Make the registered tools the server's `tools`: unregister the ones gone
   * or changed, register the new and changed ones. A tool the registry
   * refuses (a name taken by another plugin, a schema ajv cannot compile) is
   * logged and left out.
   */
  private apply(tools: Tool[]): void {
    const sdk = this.sdk!;
    const spec = this.spec;
    const want = new Map<string, { tool: Tool; key: string }>();
    for (const tool of tools) {
      let name = mcpToolName(this.name, tool.name);
      if (want.has(name)) name = mcpToolName(this.name, `${tool.name}\u0000`);
      want.set(name, { tool, key: JSON.stringify([tool.name, tool.description, tool.inputSchema, tool.annotations, isRiskyMcpTool(spec, tool)]) });
    }
    const removed: string[] = [];
    for (const [name, r] of this.registered) {
      if (want.get(name)?.key === r.key) continue;
      sdk.unregisterTool(name);
      this.registered.delete(name);
      removed.push(name);
    }
    const added: string[] = [];
    for (const [name, { tool, key }] of want) {
      if (this.registered.has(name)) continue;
      try {
        sdk.registerTool(this.toolDef(name, tool));
        this.registered.set(name, { mcpName: tool.name, key });
        added.push(name);
      } catch (err) {
        sdk.log.warn({ tool: tool.name, err: errorMessage(err) }, 'MCP tool left out');
      }
    }
    if (removed.length || added.length) sdk.log.info({ tools: this.registered.size, added: added.length, removed: removed.length }, 'MCP tools registered');
  }

  private toolDef(name: string, tool: Tool): ToolDef {
    const risky = isRiskyMcpTool(this.spec, tool);
    const callMs = this.callTimeoutMs();
    const confirmMs = risky ? this.confirmTimeoutMs() : 0;
    const text = (tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name).trim();
    const description = `${text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text}${risky ? ' (asks the household first)' : ''}`;
    return {
      name,
      description,
      parameters: mcpParameters(tool.inputSchema),
      // The call's own limit (the SDK's) ends it first; this one only catches a server that ignores it.
      timeout_ms: callMs + confirmMs + 1000,
      handler: (args, ctx) => this.call(tool.name, risky, args, ctx),
    };
  }

  private confirmTimeoutMs(): number {
    try {
      return this.sdk!.settings().get<number>('plugin.home.confirm_timeout_ms');
    } catch {
      return DEFAULT_CONFIRM_MS;
    }
  }

  /** One call of server tool `tool` (after the household's yes when risky). */
  private async call(tool: string, risky: boolean, args: Record<string, unknown>, ctx: ToolContext): Promise<string | ToolOutput> {
    const label = `${this.name} ${tool}`;
    if (risky) await this.confirm(tool, args, ctx);
    if (ctx.signal.aborted) throw new HomeAgentError('MCP_ABORTED', `${label} was not called: the turn was stopped`);
    const conn = this.conn;
    if (!conn) throw new HomeAgentError('MCP_RECONNECTING', `the MCP server of ${this.name} is not connected (it went away; reconnecting): ${label} was not called; try again shortly`);
    let r: CallToolResult;
    try {
      r = (await conn.client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.callTimeoutMs(), signal: ctx.signal, resetTimeoutOnProgress: true })) as CallToolResult;
    } catch (err) {
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new HomeAgentError('MCP_TIMEOUT', `${label} timed out after ${this.callTimeoutMs()} ms (it may still be running on the server)`);
      }
      if (ctx.signal.aborted) throw new HomeAgentError('MCP_ABORTED', `${label} was cancelled: the turn was stopped`);
      if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
        throw new HomeAgentError('MCP_TOOL_ERROR', `${label} failed: ${err.message}`);
      }
      // The server went away during the call (the child exited, HTTP refused): the call's fate is unknown.
      if (this.conn === conn) this.lost(errorMessage(err));
      throw new HomeAgentError('MCP_SERVER_GONE', `the MCP server of ${this.name} went away during ${label}; whether it acted is unknown; reconnecting`);
    }
    return mcpResult(label, r);
  }

  /** Ask the household on the input's channel; throws HomeAgentError MCP_NOT_CONFIRMED unless the answer is yes. */
  private async confirm(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<void> {
    const sdk = this.sdk!;
    const gate = this.gate!;
    const lang = detectLanguage(ctx.input.text) === 'zh' ? 'zh' : 'en';
    const shown = summariseArgs(args);
    const what = `run ${tool} of ${this.name}${shown ? ` (${shown})` : ''}`;
    const question = lang === 'zh' ? `要执行 ${this.name} 的 ${tool} 吗${shown ? `（${shown}）` : ''}？请说是或不是。` : `Shall I ${what}? Please say yes or no.`;
    const answered = new AbortController();
    const onStop = (): void => gate.cancel(true);
    ctx.signal.addEventListener('abort', onStop, { once: true });
    // The answer arrives as a new input on the same channel: the kernel hands it to this waiter instead of queueing a turn.
    void sdk
      .awaitInput({ channel: ctx.input.channel, timeout_ms: this.confirmTimeoutMs(), accept: (t) => parseYesNo(t) !== undefined, signal: answered.signal })
      .then((input) => {
        if (input) gate.answer(input.text, input.channel);
      });
    let ok: boolean;
    try {
      ok = await gate.request({ who: `${ctx.input.user ?? ctx.input.source} via ${this.name}`, what, channel: ctx.input.channel, question, lang });
    } finally {
      answered.abort();
      ctx.signal.removeEventListener('abort', onStop);
    }
    if (!ok) throw new HomeAgentError('MCP_NOT_CONFIRMED', `the household did not confirm "${what}" (no yes within the time limit), so it was not done`);
  }
}

/** `key: value` pairs of a call's arguments for a spoken question, each value cut to 40 characters, at most 3. */
function summariseArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .slice(0, 3)
    .map(([k, v]) => {
      const s = typeof v === 'string' ? v : JSON.stringify(v);
      return `${k}: ${s.length > 40 ? `${s.slice(0, 40)}…` : s}`;
    })
    .join(', ');
}
