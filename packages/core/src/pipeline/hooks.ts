// The hooks a host plugs into the pipeline: pre-stage hooks that may refuse (approver,
// guards), the execute wrapper, and observers (on<Event>) that can never change a call.
import type { JsonObject, JsonValue } from '../json/json-types.js';
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
