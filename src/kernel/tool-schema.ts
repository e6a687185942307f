/**
 * Schemas once: a tool's argument type comes from its JSON Schema. The
 * schema literal is the single definition; ajv (src/kernel/tool-registry.ts)
 * validates every call against it before the handler runs, and
 * `FromSchema<S>` derives the TypeScript type of the arguments from the same
 * literal, so a handler reads typed arguments without re-checking what ajv
 * already guarantees.
 *
 * Supported JSON Schema (draft 7 / 2020-12 subset, what tool schemas use):
 * `type` (one name or a list), `enum`, `const`, `properties`, `required`,
 * `items`, `default`. Keywords that narrow a value without changing its type
 * (minimum, maxLength, pattern, description ...) are validated by ajv and
 * ignored by the type. A property that is in `required` or carries a
 * `default` is present (the registry's ajv runs with `useDefaults`).
 * Anything else types as `unknown`, never wider than what ajv checks.
 */
import { Ajv } from 'ajv';
import type { ToolContext, ToolDef, ToolHandler } from './stage-types.js';

/** A JSON Schema literal as `FromSchema` reads it (readonly, so `as const` and `const` type parameters fit). */
export interface JsonSchemaLiteral {
  readonly type?: JsonTypeName | readonly JsonTypeName[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly properties?: { readonly [key: string]: JsonSchemaLiteral };
  readonly required?: readonly string[];
  readonly items?: JsonSchemaLiteral;
  readonly default?: unknown;
  readonly [keyword: string]: unknown;
}

/** The JSON Schema type names. */
export type JsonTypeName = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

/** An object schema: the root of every tool's parameters. */
export interface ObjectSchemaLiteral extends JsonSchemaLiteral {
  readonly type: 'object';
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type PresentKeys<S extends JsonSchemaLiteral> =
  | (S['required'] extends readonly (infer R)[] ? Extract<R, string> : never)
  | { [K in keyof S['properties']]: S['properties'][K] extends { readonly default: unknown } ? K : never }[keyof S['properties']];

type FromObject<S extends JsonSchemaLiteral> = S['properties'] extends { readonly [key: string]: JsonSchemaLiteral }
  ? Simplify<
      { -readonly [K in keyof S['properties'] & PresentKeys<S>]: FromSchema<S['properties'][K]> } & {
        -readonly [K in Exclude<keyof S['properties'], PresentKeys<S>>]?: FromSchema<S['properties'][K]>;
      }
    >
  : Record<string, unknown>;

type FromTypeName<T, S extends JsonSchemaLiteral> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'object'
          ? FromObject<S>
          : T extends 'array'
            ? S['items'] extends JsonSchemaLiteral
              ? FromSchema<S['items']>[]
              : unknown[]
            : unknown;

/**
 * The TypeScript type of a value that passed ajv validation against `S`.
 * `const` wins over `enum`, `enum` over `type`; `type` may be a list.
 */
export type FromSchema<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : S extends JsonSchemaLiteral
      ? S['type'] extends readonly (infer T)[]
        ? FromTypeName<T, S>
        : S['type'] extends JsonTypeName
          ? FromTypeName<S['type'], S>
          : unknown
      : unknown;

/** A tool whose handler receives the arguments typed from `parameters`. */
export interface TypedToolDef<S extends ObjectSchemaLiteral> extends Omit<ToolDef, 'parameters' | 'handler'> {
  parameters: S;
  handler: (args: FromSchema<S>, ctx: ToolContext) => unknown | Promise<unknown>;
}

/**
 * Define a tool from one schema literal: `parameters` is what ajv validates
 * and what the model sees, the handler's `args` type is derived from it
 * (write the literal inline, or `as const` when it is a separate constant).
 * The cast to the registry's untyped handler is sound because the registry
 * validates every call's arguments against `parameters` before calling it.
 */
export function defineTool<const S extends ObjectSchemaLiteral>(def: TypedToolDef<S>): ToolDef {
  return { ...def, parameters: def.parameters as unknown as ToolDef['parameters'], handler: def.handler as unknown as ToolHandler };
}

/** The ajv options the tool registry validates with (JSON Schema defaults filled in, no type coercion). */
export const TOOL_AJV_OPTIONS = { allErrors: true, strict: false, coerceTypes: false, useDefaults: true } as const;

/**
 * A type guard from a schema literal, for code that sees a tool's arguments
 * before the registry validated them (a before_toolcall stage): true when
 * `value` passes the same validation, and then it is `FromSchema<S>`.
 * Like the registry, validation fills in schema defaults in `value`. Compiles
 * once; throws ajv's error when `schema` is not a valid JSON Schema.
 */
export function schemaGuard<const S extends JsonSchemaLiteral>(schema: S): (value: unknown) => value is FromSchema<S> {
  const validate = new Ajv(TOOL_AJV_OPTIONS).compile(schema as unknown as Record<string, unknown>);
  return (value: unknown): value is FromSchema<S> => validate(value) === true;
}
