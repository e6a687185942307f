/**
 * Conversions at the process-plugin RPC boundary (src/plugins/external/process.ts):
 * params checks, kernel errors as JSON-RPC errors (protocol.ts RPC_ERRORS),
 * output capability names, and the stage context as JSON (WireStageContext).
 * No IO.
 */
import { DuplicateToolError, HomeAgentError, errorMessage } from '../../kernel/errors.js';
import type { StageContext } from '../../kernel/stage-types.js';
import { CAP_NAMES, RPC_ERRORS, type WireStageContext } from './protocol.js';
import { RpcError } from './rpc.js';

/** Output capability names to the kernel's Cap flags. */
export function capsFromNames(names: unknown): number {
  if (!Array.isArray(names) || names.length === 0) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, `caps must be a non-empty array of ${Object.keys(CAP_NAMES).join(', ')}`);
  let caps = 0;
  for (const n of names) {
    const bit = typeof n === 'string' ? CAP_NAMES[n] : undefined;
    if (bit === undefined) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, `unknown output capability "${String(n)}"; known: ${Object.keys(CAP_NAMES).join(', ')}`);
    caps |= bit;
  }
  return caps;
}

/** `params` as an object; RpcError INVALID_PARAMS otherwise. */
export function obj(params: unknown, method: string): Record<string, unknown> {
  if (!params || typeof params !== 'object' || Array.isArray(params)) throw new RpcError(RPC_ERRORS.INVALID_PARAMS, `${method}: params must be an object`);
  return params as Record<string, unknown>;
}

/** A non-empty string field of `p`; RpcError INVALID_PARAMS otherwise. */
export function str(p: Record<string, unknown>, key: string, method: string): string {
  const v = p[key];
  if (typeof v !== 'string' || v === '') throw new RpcError(RPC_ERRORS.INVALID_PARAMS, `${method}: "${key}" must be a non-empty string`);
  return v;
}

/** A kernel error as the JSON-RPC error the plugin gets. */
export function toRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof DuplicateToolError) return new RpcError(RPC_ERRORS.DUPLICATE, err.message, { code: err.code });
  if (err instanceof HomeAgentError) {
    if (err.code === 'PERMISSION_DENIED') return new RpcError(RPC_ERRORS.PERMISSION_DENIED, err.message, { code: err.code });
    if (/DUPLICATE/.test(err.code)) return new RpcError(RPC_ERRORS.DUPLICATE, err.message, { code: err.code });
    return new RpcError(RPC_ERRORS.FAILED, err.message, { code: err.code });
  }
  return new RpcError(RPC_ERRORS.FAILED, errorMessage(err));
}

/** JSON copy of a value, or undefined when it cannot be encoded. */
export function jsonCopy(v: unknown): unknown {
  try {
    return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
  } catch {
    return undefined;
  }
}

/** The stage context as sent to the plugin (seed 000 §11 StageContext, JSON). */
export function wireContext(ctx: StageContext): WireStageContext {
  return {
    stage: ctx.stage,
    input: { id: ctx.input.id, channel: ctx.input.channel, text: ctx.input.text, source: ctx.input.source },
    raw_message: ctx.raw_message,
    context_messages: (jsonCopy(ctx.context_messages) as unknown[]) ?? [],
    llm_text: ctx.llm_text,
    tool_calls: (jsonCopy(ctx.tool_calls) as unknown[]) ?? [],
    ...(ctx.tool_call ? { tool_call: jsonCopy(ctx.tool_call) } : {}),
    deny: ctx.deny,
    ...(ctx.deny_reason !== undefined ? { deny_reason: ctx.deny_reason } : {}),
    ...(ctx.tool_result ? { tool_result: jsonCopy(ctx.tool_result) } : {}),
    final_text: ctx.final_text,
    partial: ctx.partial,
    skip_output: ctx.skip_output,
    ...(ctx.response !== undefined ? { response: ctx.response } : {}),
    memory: (jsonCopy(ctx.memory) as unknown[]) ?? [],
    extra: (jsonCopy(ctx.extra) as Record<string, unknown>) ?? {},
  };
}

