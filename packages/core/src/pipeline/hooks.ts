// The hooks a host plugs into the pipeline: pre-stage hooks that may refuse (approver,
// guards), the execute wrapper, and observers (on<Event>) that can never change a call.
import type { AirlockError } from '../errors/airlock-error.js';
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

/** Where a contained failure was caught; see PipelineObservers.onError. */
export interface ContainedErrorContext {
  /**
   * `preSchedule`: a preSchedule hook threw or rejected (the turn ran without its preparation;
   * a sandbox's calls then run exclusive). `scheduler`: the scheduler or a stage failed
   * unexpectedly (the calls it left unanswered get TOOL_ERROR). `observer`: an observer threw
   * (ignored).
   */
  readonly source: 'preSchedule' | 'scheduler' | 'observer';
  /** Which observer threw, when `source` is `observer`. */
  readonly observer?: 'onResult' | 'onStage' | 'onLateSettlement';
  /** The call concerned, when there is one. */
  readonly callId?: string;
  readonly tenant: string | undefined;
}

/** Observers watch; none can change, delay or break a call, and what one throws is reported to onError. */
export interface PipelineObservers {
  /** Each frozen result, in call order. */
  readonly onResult?: (result: ToolResult) => void;
  /** A call entering a stage of PIPELINE_STAGES; `parse` for every call of a turn before any runs. */
  readonly onStage?: (event: { readonly callId: string; readonly stage: PipelineStage }) => void;
  /** A body that settled after its call had already ended (its deadline, or a cancel before a wrapper let it start): never shown to the model. */
  readonly onLateSettlement?: (event: { readonly callId: string; readonly toolName: string; readonly outcome: 'fulfilled' | 'rejected' }) => void;
  /**
   * A failure the pipeline contained instead of throwing: every call still gets its result,
   * and this is how an operator sees what went wrong. `error` is an AirlockError
   * (`PRESCHEDULE_FAILED`, `SCHEDULER_FAILED` or `OBSERVER_FAILED`) whose `cause` is the
   * thrown value and whose `details` repeat `context`. Called synchronously; what it throws is dropped.
   */
  readonly onError?: (error: AirlockError, context: ContainedErrorContext) => void;
}
