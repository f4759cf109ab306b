// The thirteen fields of a registered tool, in two groups. Only the four model-facing
// fields ever reach a model request, through schemaOf (tool/schema-of.ts).
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import type { DraftResult, ResultMetadata, ToolResult } from '../result/tool-result.js';

export const MODEL_FACING_FIELDS = ['name', 'description', 'parameters', 'deferLoading'] as const;
export const HOST_ONLY_FIELDS = [
  'output',
  'execute',
  'projectContent',
  'finalizeContent',
  'timeoutMs',
  'maxOutputBytes',
  'isConcurrencySafe',
  'presentCall',
  'presentResult',
] as const;

/** What a tool body is handed besides its arguments. */
export interface ExecContext {
  readonly callId: string;
  readonly toolName: string;
  /**
   * Aborts on the caller's cancellation and on the host deadline. After a cancellation the
   * call waits for the body to settle (until its deadline): stop on this signal, or the turn waits.
   */
  readonly signal: AbortSignal;
  readonly tenant: string | undefined;
  /**
   * Attach accounting (CPU ms, bytes) to the result's metadata, merged key by key. Copied as
   * frozen JSON when called: what JSON cannot carry throws (`NOT_LOSSLESS_JSON`, so the call
   * fails `TOOL_ERROR`), and later changes to the object passed do not reach the result.
   */
  readonly setMetadata: (metadata: ResultMetadata) => void;
}

/** A UI card describing a call or its result. */
export interface Card {
  readonly title: string;
  readonly body?: string;
  readonly fields?: readonly { readonly label: string; readonly value: string }[];
}

export interface ModelFacingFields {
  readonly name: string;
  readonly description: string;
  /** JSON Schema with an object root. */
  readonly parameters: JsonSchema;
  readonly deferLoading?: boolean;
}

export interface HostOnlyFields<Args, Value> {
  /** Declared result schema; a value that fails it is INVALID_TOOL_OUTPUT. */
  readonly output?: JsonSchema;
  readonly execute: (args: Args, exec: ExecContext) => Value | Promise<Value>;
  /** Raw value to the text the model reads; default: JSON text. */
  readonly projectContent?: (args: Args, value: Value) => string;
  /** Last-mile content transform, called exactly once for every outcome. */
  readonly finalizeContent?: (exec: ExecContext, result: DraftResult) => string;
  /** Host wall-clock deadline per call, in milliseconds. Never sent to the model. */
  readonly timeoutMs?: number;
  /**
   * Largest result this tool may return (UTF-8 bytes of its JSON, and of its content), in place
   * of the engine's `limits.maxOutputBytes`. Set by the sandbox from a manifest's
   * `limits.maxOutputBytes`. Never sent to the model.
   */
  readonly maxOutputBytes?: number;
  /** Only the literal `true` admits a call to a parallel group. */
  readonly isConcurrencySafe?: (args: Args) => boolean;
  readonly presentCall?: (args: Args) => Card;
  readonly presentResult?: (args: Args, result: ToolResult) => Card;
}

export type ToolDefinition<Args = JsonObject, Value extends JsonValue = JsonValue> = ModelFacingFields &
  HostOnlyFields<Args, Value>;

/** A tool as the registry holds it: args erased to JSON, schemas snapshotted. */
export type AnyTool = ToolDefinition<JsonObject, JsonValue>;
