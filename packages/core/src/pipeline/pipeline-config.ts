import type { JsonObject, JsonValue } from '../json/json-types.js';
import type { PermissionPolicy } from '../permission/permission-policy.js';
import type { RegisteredTool, ToolRegistry } from '../registry/tool-registry.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ExecContext } from '../tool/tool-definition.js';
import type { PipelineStage } from './stage-order.js';

export interface ApprovalRequest {
  readonly callId: string;
  readonly toolName: string;
  readonly args: JsonObject;
  readonly tenant: string | undefined;
  readonly reason: string;
}

/** Answers an `ask`. Only the literal `true` approves; anything else is a denial. */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => unknown;

export interface GuardInput {
  readonly callId: string;
  readonly toolName: string;
  readonly args: JsonObject;
  readonly tenant: string | undefined;
}

/** A guard may only deny: return `{ deny: reason }` to refuse, anything else to pass. */
export type Guard = (input: GuardInput) => { readonly deny: string } | undefined | void | Promise<{ readonly deny: string } | undefined | void>;

/**
 * Wraps the execute stage. `next` may be given a replacement signal (a deadline, a scope);
 * the pipeline fuses it with the caller's, so a wrapper cannot detach cancellation.
 */
export type ExecuteWrapper = (
  exec: ExecContext,
  next: (replace?: { readonly signal?: AbortSignal }) => Promise<JsonValue>,
) => Promise<JsonValue>;

export interface PipelineObservers {
  /** Each frozen result, in call order. */
  readonly onResult?: (result: ToolResult) => void;
  readonly onStage?: (event: { readonly callId: string; readonly stage: PipelineStage }) => void;
  /** A body that settled after its call had already ended (timeout, abort): never shown to the model. */
  readonly onLateSettlement?: (event: { readonly callId: string; readonly toolName: string; readonly outcome: 'fulfilled' | 'rejected' }) => void;
}

export interface PipelineLimits {
  /** Largest argument payload accepted, in UTF-8 bytes. Default 1 MiB. */
  readonly maxArgumentBytes: number;
  /** Deepest argument nesting accepted. Default 64. */
  readonly maxArgumentDepth: number;
  /** Largest value or content, in UTF-8 bytes of JSON text. Default 1 MiB. */
  readonly maxOutputBytes: number;
  /** How long an approver may take, in milliseconds. Default 5 minutes. */
  readonly approvalTimeoutMs: number;
}

export const DEFAULT_LIMITS: PipelineLimits = Object.freeze({
  maxArgumentBytes: 1024 * 1024,
  maxArgumentDepth: 64,
  maxOutputBytes: 1024 * 1024,
  approvalTimeoutMs: 5 * 60 * 1000,
});

export interface PipelineConfig {
  readonly registry: ToolRegistry;
  readonly policy: PermissionPolicy;
  readonly approver?: Approver | undefined;
  readonly guards: readonly Guard[];
  readonly executeWrappers: readonly ExecuteWrapper[];
  readonly observers: PipelineObservers;
  readonly limits: PipelineLimits;
}

/** A call after the parse stage: either ready to run or already failed. */
export interface ParsedCall {
  readonly index: number;
  readonly callId: string;
  readonly name: string;
  readonly tool: RegisteredTool | undefined;
  readonly args: JsonObject | undefined;
  readonly failure: { readonly code: 'INVALID_ARGS' | 'UNKNOWN_TOOL'; readonly message: string } | undefined;
}
