/**
 * Tool registry (seed 001 StageHost tool half): names are unique, the owner
 * plugin is recorded, arguments are validated against the tool's JSON Schema
 * with ajv before execution, execution is time-limited and never throws — a
 * failure becomes a tool error result for the model.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonSchema, ToolSchema } from './llm-types.js';
import type { Logger } from './log-types.js';
import type { ToolContext, ToolDef, ToolOutput } from './stage-types.js';
import { DuplicateToolError, HomeAgentError, errorMessage } from './errors.js';
import { TOOL_AJV_OPTIONS } from './tool-schema.js';

/** A tool's arguments did not match its schema. */
export class ToolArgumentsError extends HomeAgentError {
  constructor(readonly tool: string, readonly details: string) {
    super('TOOL_ARGUMENTS_INVALID', `invalid arguments for ${tool}: ${details}`);
  }
}

/** The model asked for a tool nobody registered. */
export class UnknownToolError extends HomeAgentError {
  constructor(readonly tool: string) {
    super('TOOL_UNKNOWN', `unknown tool "${tool}"`);
  }
}

interface Entry {
  def: ToolDef;
  owner: string;
  /** def.group, else the owner's name without surrounding underscores ('_memory_' -> 'memory'). */
  group: string;
  validate: ValidateFunction;
}

/** Outcome of one execution. */
export interface ToolExecution {
  content: string;
  is_error: boolean;
  duration_ms: number;
  /** Base64 images the tool returned (ToolOutput). */
  images?: string[];
}

/** The registry. */
export class ToolRegistry {
  private readonly tools = new Map<string, Entry>();
  private readonly ajv = new Ajv(TOOL_AJV_OPTIONS);

  constructor(
    private readonly log: Logger,
    /** Default per-call time limit, ms. */
    public defaultTimeoutMs = 30000,
  ) {}

  /**
   * Register `def` for `owner`. Throws DuplicateToolError when the name is
   * taken, HomeAgentError(TOOL_SCHEMA_INVALID) when the schema does not compile.
   */
  register(owner: string, def: ToolDef): void {
    const existing = this.tools.get(def.name);
    if (existing) throw new DuplicateToolError(def.name, existing.owner);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(def.name)) {
      throw new HomeAgentError('TOOL_NAME_INVALID', `tool name "${def.name}" must be 1-64 letters, digits, _ or -`);
    }
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(normaliseSchema(def.parameters));
    } catch (err) {
      throw new HomeAgentError('TOOL_SCHEMA_INVALID', `tool ${def.name}: parameters are not a valid JSON Schema: ${errorMessage(err)}`);
    }
    const group = def.group ?? (owner.replace(/^_+|_+$/g, '') || owner);
    this.tools.set(def.name, { def, owner, group, validate });
  }

  unregister(name: string): void {
    this.tools.delete(name);
  }

  /** Remove every tool `owner` registered; returns their names. */
  removeOwner(owner: string): string[] {
    const removed: string[] = [];
    for (const [name, e] of this.tools) {
      if (e.owner === owner) {
        this.tools.delete(name);
        removed.push(name);
      }
    }
    return removed;
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): ToolDef | undefined {
    return this.tools.get(name)?.def;
  }

  ownerOf(name: string): string | undefined {
    return this.tools.get(name)?.owner;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The group of tool `name` (ToolDef.group, else its owner's name); undefined for an unknown tool. */
  groupOf(name: string): string | undefined {
    return this.tools.get(name)?.group;
  }

  /** Every group with its tools' names, groups sorted by name, tools in registration order. */
  groups(): Array<{ group: string; tools: string[] }> {
    const by = new Map<string, string[]>();
    for (const [name, e] of this.tools) {
      const list = by.get(e.group);
      if (list) list.push(name);
      else by.set(e.group, [name]);
    }
    return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([group, tools]) => ({ group, tools }));
  }

  /** Tool schemas for the model (`modelSchema` of each tool's parameters), in registration order, optionally filtered. */
  schemas(filter?: (def: ToolDef) => boolean): ToolSchema[] {
    const out: ToolSchema[] = [];
    for (const { def } of this.tools.values()) {
      if (filter && !filter(def)) continue;
      out.push(toolSchema(def));
    }
    return out;
  }

  /** The schemas of the tools `names`, in that order; names nobody registered are left out. */
  schemasOf(names: readonly string[]): ToolSchema[] {
    const out: ToolSchema[] = [];
    for (const n of names) {
      const e = this.tools.get(n);
      if (e) out.push(toolSchema(e.def));
    }
    return out;
  }

  /** Validate `args` for `name`; returns null when valid, else the error. */
  validate(name: string, args: Record<string, unknown>): HomeAgentError | null {
    const e = this.tools.get(name);
    if (!e) return new UnknownToolError(name);
    if (e.validate(args)) return null;
    const details = (e.validate.errors ?? [])
      .map((x) => `${x.instancePath || '(root)'} ${x.message ?? 'is invalid'}${x.params && 'allowedValues' in x.params ? ` (${(x.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : ''}`)
      .join('; ');
    return new ToolArgumentsError(name, details);
  }

  /**
   * Validate and execute. Never throws: unknown tools, invalid arguments,
   * handler errors and timeouts come back as `is_error` results with a message
   * the model can act on.
   */
  async execute(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolExecution> {
    const started = performance.now();
    const done = (content: string, is_error: boolean): ToolExecution => ({ content, is_error, duration_ms: performance.now() - started });
    const e = this.tools.get(name);
    if (!e) return done(`error: unknown tool "${name}"; available: ${this.names().join(', ')}`, true);
    const invalid = this.validate(name, args);
    if (invalid) return done(`error: ${invalid.message}`, true);
    const timeoutMs = e.def.timeout_ms ?? this.defaultTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        Promise.resolve().then(() => e.def.handler(args, ctx)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new HomeAgentError('TOOL_TIMEOUT', `tool ${name} timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (isToolOutput(result)) return { ...done(result.text, false), ...(result.images?.length ? { images: result.images } : {}) };
      return done(stringifyResult(result), false);
    } catch (err) {
      // The message may quote what was said (a name, a value): at the default level only the error's code (issue 18).
      this.log.warn({ tool: name, owner: e.owner, code: err instanceof HomeAgentError ? err.code : err instanceof Error ? err.name : 'error' }, 'tool failed');
      this.log.debug({ tool: name, err: errorMessage(err) }, 'tool failed: message');
      return done(`error: ${errorMessage(err)}`, true);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}

/** Whether a handler returned a ToolOutput. */
export function isToolOutput(v: unknown): v is ToolOutput {
  return !!v && typeof v === 'object' && (v as { kind?: unknown }).kind === 'tool_output' && typeof (v as { text?: unknown }).text === 'string';
}

/** Tool results as text for the model: strings as they are, everything else as JSON. */
export function stringifyResult(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined || result === null) return 'ok';
  try {
    return JSON.stringify(result);
  } catch {
    return String(result);
  }
}

/** A tool as the model is offered it: name, description, `modelSchema` of its parameters. */
export function toolSchema(def: ToolDef): ToolSchema {
  return { type: 'function', function: { name: def.name, description: def.description, parameters: modelSchema(normaliseSchema(def.parameters)) } };
}

/**
 * Vendor keyword (ajv, strict off, ignores it) marking an optional argument
 * the model is not shown: a rarely useful one whose schema would cost every
 * turn tokens (issue 19). It is still accepted and validated when sent.
 */
export const MODEL_HIDDEN = 'x-model-hidden';

/** Keywords ajv checks that tell a model nothing it needs to fill the arguments in (length limits, the non-blank pattern, item counts, closed objects). */
const VALIDATION_ONLY = new Set(['pattern', 'minLength', 'maxLength', 'minItems', 'maxItems', 'additionalProperties', '$schema', MODEL_HIDDEN]);

/**
 * The parameters schema as the model reads it (issue 19: everything offered
 * counts toward the prompt): the keywords in VALIDATION_ONLY are left out,
 * so are the properties marked `"x-model-hidden": true` (MODEL_HIDDEN),
 * and a type list of one type and `null` (optional arguments that accept
 * null as absent) is shown as that one type. The registry still validates
 * every call against the whole schema, so what is left out is still enforced.
 * Pure; returns a new object.
 */
export function modelSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (VALIDATION_ONLY.has(k)) continue;
    if (k === 'type' && Array.isArray(v) && v.length === 2 && v.includes('null')) out[k] = v.find((t) => t !== 'null');
    else if (k === 'properties' && v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v as Record<string, JsonSchema>).filter(([, s]) => !(s as Record<string, unknown>)[MODEL_HIDDEN]).map(([p, s]) => [p, modelSchema(s)]));
    else if (k === 'items' && v && typeof v === 'object' && !Array.isArray(v)) out[k] = modelSchema(v as JsonSchema);
    else out[k] = v;
  }
  return out;
}

/** Ensure a schema is an object schema (models expect `type: object` at the root). */
function normaliseSchema(schema: JsonSchema): JsonSchema {
  if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return { type: 'object', properties: {} };
  return schema;
}
