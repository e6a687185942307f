/**
 * HomeAgent plugin SDK for process plugins (issue 17 "An SDK for authors"):
 * write a plugin in TypeScript or JavaScript, run it as the `entry` of a
 * `plugin.json` with `"kind": "process"`; it speaks the JSON-RPC protocol
 * (src/plugins/external/protocol.ts; docs/PLUGINS.md "Process plugins
 * (JSON-RPC)") over stdin/stdout. Imported as `homeagent/plugin-sdk`. It has
 * no dependencies, so it can be bundled into a single file (esbuild) and run
 * by plain `node` inside the sandbox.
 *
 *   import { definePlugin } from 'homeagent/plugin-sdk';
 *   definePlugin({
 *     tools: {
 *       solar_power: {
 *         description: 'Current power of the solar inverter, watts. Example: {}',
 *         parameters: { type: 'object', properties: {}, additionalProperties: false },
 *         handler: async () => ({ watts: 1234 }),
 *       },
 *     },
 *     stages: { before_output: (ctx) => { ctx.final_text = ctx.final_text.replace('kW', 'kilowatts'); } },
 *     events: { 'plugin.timers.changed': (e) => console.error('timer', e) },
 *   });
 *
 * stdout belongs to the protocol: log with `kernel.log.*` or console.error
 * (stderr is logged under the plugin's name); the SDK sends console.log to
 * stderr too.
 */
import { PROTOCOL_VERSION, RPC_ERRORS, type InitializeParams, type ToolCallParams, type WireStageContext } from '../plugins/external/protocol.js';
import { LineReader, RpcError, RpcPeer } from '../plugins/external/rpc.js';

export { PROTOCOL_VERSION, RPC_ERRORS, RpcError };
export type { InitializeParams, WireStageContext };

/** What a tool handler gets besides its arguments. */
export interface ToolCallContext {
  call_id: string;
  /** The input whose turn called the tool. */
  input: ToolCallParams['input'];
  /** Aborted when the kernel cancels the call (the turn was stopped). */
  signal: AbortSignal;
  kernel: KernelClient;
}

/** One tool: `parameters` is a JSON Schema (type object) the kernel validates arguments against before calling. */
export interface ToolSpec {
  description: string;
  parameters: Record<string, unknown>;
  /** Returns text for the model or any JSON value; throwing makes a tool error the model sees. */
  handler: (args: Record<string, unknown>, ctx: ToolCallContext) => unknown | Promise<unknown>;
  /** One call's limit, ms (never above the plugin's call_timeout_ms). */
  timeout_ms?: number;
  group?: string;
  no_memory?: boolean;
}

/** A stage handler: change the fields its stage may write (seed 000 §3: on_input raw_message/response, before_toolcall deny/deny_reason/tool_call, ...). */
export type StageFn = (ctx: WireStageContext, kernel: KernelClient) => void | Promise<void>;

/** An output channel the plugin serves. */
export interface OutputSpec {
  /** text, file, image, audio, structured, stream */
  caps: string[];
  description: string;
  deliver: (message: { channel: string; kind: string; content: string; type: string; meta: Record<string, unknown> }, kernel: KernelClient) => void | Promise<void>;
}

/** A plugin's definition. */
export interface PluginSpec {
  tools?: Record<string, ToolSpec>;
  stages?: Partial<Record<string, StageFn | { handler: StageFn; timeout_ms?: number }>>;
  /** Event subscriptions: event type → handler (needs the `events:subscribe` capability). */
  events?: Record<string, (payload: unknown, kernel: KernelClient) => void | Promise<void>>;
  outputs?: Record<string, OutputSpec>;
  /** Runs after the handshake, before the registrations; may register more through `kernel`. */
  start?: (kernel: KernelClient) => void | Promise<void>;
  /** Runs on `shutdown`. */
  stop?: (kernel: KernelClient) => void | Promise<void>;
  /** A registration the kernel refused (a taken tool name, a capability not granted). Default: log it and go on. */
  onRegisterError?: (what: string, err: RpcError, kernel: KernelClient) => void;
}

/** The plugin's handle on the kernel. */
export interface KernelClient {
  /** From `initialize`: capabilities, settings, folders, whether sandboxed. */
  readonly init: InitializeParams;
  readonly settings: Record<string, unknown>;
  readonly log: { debug(msg: string, data?: object): void; info(msg: string, data?: object): void; warn(msg: string, data?: object): void; error(msg: string, data?: object): void };
  /** Publish `plugin.<name>.<what>` (capability events:publish). */
  publish(type: string, payload: unknown): Promise<void>;
  /** Queue an input (level 0) or raise an interrupt (1-3; capability inject:Lx); resolves when its turn ends. */
  inject(channel: string, text: string, level?: number): Promise<{ input_id: string; status: string; reply: string }>;
  /** Any protocol method (memory.recall, social.get_person, settings.get, ...). */
  call<T = unknown>(method: string, params?: unknown): Promise<T>;
}

/** Streams the SDK talks over (default: process.stdin / process.stdout). */
export interface PluginIO {
  input: NodeJS.ReadableStream;
  output: { write(s: string): unknown };
  /** Called when the plugin should end (shutdown, stdin closed). Default: process.exit(0) once stdout is flushed. */
  exit?: (code: number) => void;
}

/**
 * Serve `spec` over stdio (or `io`): answers `initialize` and `start`,
 * registers the spec's tools, stages, events and outputs during the start
 * window, then dispatches the kernel's calls. Resolves once registered.
 */
export function definePlugin(spec: PluginSpec, io?: PluginIO): Promise<KernelClient> {
  const input = io?.input ?? process.stdin;
  const output = io?.output ?? process.stdout;
  const exit = io?.exit ?? ((code: number) => {
    process.stdout.write('', () => process.exit(code));
  });
  if (!io) {
    // stdout is the protocol's: console.log would corrupt it.
    console.log = (...a: unknown[]) => console.error(...a);
  }
  const cancels = new Map<number | string, AbortController>();
  const stageFns = new Map<string, StageFn>();
  let kernel: KernelClient | undefined;
  let resolveReady: (k: KernelClient) => void = () => undefined;
  let rejectReady: (e: Error) => void = () => undefined;
  const ready = new Promise<KernelClient>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });

  const peer: RpcPeer = new RpcPeer(
    (line) => void output.write(line + '\n'),
    {
      request: async (method, params, id) => {
        switch (method) {
          case 'initialize': {
            const init = params as InitializeParams;
            if (init.protocol !== PROTOCOL_VERSION) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, `this plugin speaks protocol ${PROTOCOL_VERSION}, not ${init.protocol}`);
            kernel = makeKernel(peer, init);
            return { protocol: PROTOCOL_VERSION, name: init.plugin };
          }
          case 'start': {
            const k = need(kernel);
            try {
              await spec.start?.(k);
              await register(k);
            } catch (err) {
              rejectReady(err as Error);
              throw err;
            }
            resolveReady(k);
            return {};
          }
          case 'tool.call': {
            const p = params as ToolCallParams;
            const tool = spec.tools?.[p.name];
            if (!tool) throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `no tool "${p.name}"`);
            const ac = new AbortController();
            cancels.set(id, ac);
            try {
              const content = await tool.handler(p.args ?? {}, { call_id: p.call_id, input: p.input, signal: ac.signal, kernel: need(kernel) });
              return { content: content === undefined ? 'ok' : content };
            } catch (err) {
              return { content: err instanceof Error ? err.message : String(err), is_error: true };
            } finally {
              cancels.delete(id);
            }
          }
          case 'stage.run': {
            const ctx = params as WireStageContext;
            const fn = stageFns.get(ctx.stage);
            if (!fn) return {};
            const before = JSON.stringify(ctx);
            const snapshot = JSON.parse(before) as Record<string, unknown>;
            await fn(ctx, need(kernel));
            const set: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(ctx)) {
              if (k === 'stage' || k === 'input' || k === 'partial' || k === 'memory') continue;
              if (JSON.stringify(v) !== JSON.stringify(snapshot[k])) set[k] = v;
            }
            return Object.keys(set).length ? { set } : {};
          }
          case 'output.deliver': {
            const p = params as { channel: string; message: Parameters<OutputSpec['deliver']>[0] };
            const out = spec.outputs?.[p.channel];
            if (!out) throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `no output channel "${p.channel}"`);
            await out.deliver(p.message, need(kernel));
            return {};
          }
          case 'shutdown': {
            try {
              await spec.stop?.(need(kernel));
            } finally {
              setImmediate(() => exit(0));
            }
            return {};
          }
          default:
            throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `unknown method "${method}"`);
        }
      },
      notification: (method, params) => {
        if (method === 'cancel') cancels.get((params as { id: number | string }).id)?.abort();
        else if (method === 'event') {
          const p = params as { type: string; payload: unknown };
          // Started at once, in arrival order: a call that follows the event sees its effect.
          try {
            const r = spec.events?.[p.type]?.(p.payload, need(kernel));
            if (r && typeof (r as Promise<void>).then === 'function') (r as Promise<void>).catch((err: unknown) => console.error(`event ${p.type} handler failed:`, err));
          } catch (err) {
            console.error(`event ${p.type} handler failed:`, err);
          }
        }
      },
      garbage: (line, why) => console.error(`homeagent plugin-sdk: ignored a line from the kernel (${why}): ${line.slice(0, 100)}`),
    },
    { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
  );

  async function register(k: KernelClient): Promise<void> {
    const onError = spec.onRegisterError ?? ((what: string, err: RpcError) => k.log.warn(`${what} refused: ${err.message}`));
    const attempt = async (what: string, method: string, params: unknown): Promise<void> => {
      try {
        await peer.call(method, params);
      } catch (err) {
        if (method === 'register_stage') stageFns.delete((params as { stage: string }).stage);
        onError(what, err instanceof RpcError ? err : new RpcError(RPC_ERRORS.FAILED, String(err)), k);
      }
    };
    const jobs: Array<Promise<void>> = [];
    for (const [name, t] of Object.entries(spec.tools ?? {})) {
      jobs.push(attempt(`tool ${name}`, 'register_tool', { name, description: t.description, parameters: t.parameters, ...(t.timeout_ms ? { timeout_ms: t.timeout_ms } : {}), ...(t.group ? { group: t.group } : {}), ...(t.no_memory ? { no_memory: true } : {}) }));
    }
    for (const [stage, s] of Object.entries(spec.stages ?? {})) {
      if (!s) continue;
      const fn = typeof s === 'function' ? s : s.handler;
      const timeout_ms = typeof s === 'function' ? undefined : s.timeout_ms;
      // Set before asking: a stage.run may follow the kernel's answer on the very next line.
      stageFns.set(stage, fn);
      jobs.push(attempt(`stage ${stage}`, 'register_stage', { stage, ...(timeout_ms ? { timeout_ms } : {}) }).catch(() => undefined));
    }
    for (const event of Object.keys(spec.events ?? {})) jobs.push(attempt(`subscription ${event}`, 'subscribe', { event }));
    for (const [name, o] of Object.entries(spec.outputs ?? {})) jobs.push(attempt(`output ${name}`, 'register_output_channel', { name, caps: o.caps, description: o.description }));
    await Promise.all(jobs);
  }

  const reader = new LineReader(64 << 20, (line) => peer.receive(line));
  input.on('data', (chunk: Buffer | string) => {
    reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  });
  input.on('end', () => {
    // The kernel is gone: answers already computed still go out, then the plugin ends.
    setImmediate(() => {
      peer.close('the kernel closed stdin');
      exit(0);
    });
  });
  return ready;
}

function need(k: KernelClient | undefined): KernelClient {
  if (!k) throw new RpcError(RPC_ERRORS.INVALID_REQUEST, 'initialize first');
  return k;
}

function makeKernel(peer: RpcPeer, init: InitializeParams): KernelClient {
  const log = (level: string) => (message: string, data?: object) => peer.notify('log', { level, message, ...(data ? { data } : {}) });
  return {
    init,
    settings: init.settings ?? {},
    log: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    publish: async (type, payload) => {
      await peer.call('publish', { type, payload });
    },
    inject: (channel, text, level = 0) => peer.call('inject', { channel, text, level }),
    call: (method, params) => peer.call(method, params),
  };
}
