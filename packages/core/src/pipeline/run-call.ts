// Walks one parsed call through PIPELINE_STAGES in the list's order, and guarantees
// exactly one frozen result and exactly one finalizeContent, whatever fails on the way.
import { draftFailure, type DraftResult, type ToolResult } from '../result/tool-result.js';
import { toolErrorMessage } from '../result/thrown-failure.js';
import type { JsonObject } from '../json/json-types.js';
import { executeStage, type ExecuteOutcome } from './execute-stage.js';
import { emitStage, reportError } from './observe.js';
import type { ParsedCall } from './parsed-call.js';
import { permissionGate, type GateOutcome } from './permission-gate.js';
import type { PipelineConfig } from './pipeline-config.js';
import { postProcess } from './post-process.js';
import { resultStage, type CallRecord } from './result-stage.js';
import { runGuards } from './run-guards.js';
import { PIPELINE_STAGES, type PipelineStage } from './stage-order.js';

interface CallWalk extends CallRecord {
  /** The parsed arguments; unread when parse failed. */
  readonly args: JsonObject;
  /** The body's raw value, once the execute stage succeeded. */
  value: unknown;
}

/** A stage's verdict on one call: `undefined` goes on to the next stage, a draft ends the walk. */
type Verdict = DraftResult | undefined;

interface StageStep<Outcome = Verdict> {
  /** Whether the stage is skipped, answering ABORTED_BEFORE_DISPATCH, once the caller cancelled. */
  readonly beforeDispatch: boolean;
  readonly run: (walk: CallWalk) => Outcome | Promise<Outcome>;
  /** Turns what `run` settled with into a verdict; without it, `run` gives the verdict itself. */
  readonly settle?: (walk: CallWalk, outcome: Outcome) => Verdict;
}

/**
 * The stages a parsed call walks, by name. `parse` ran for the whole turn before any call
 * (parse-stage.ts), and `result` closes every walk, failures included (result-stage.ts).
 */
const STEPS: { readonly [S in Exclude<PipelineStage, 'parse' | 'result'>]: S extends 'execute' ? StageStep<ExecuteOutcome> : StageStep } = {
  permission: { beforeDispatch: true, run: permission },
  guards: { beforeDispatch: true, run: guards },
  // Settled apart so the body's own promise is awaited, with no wrapper promise per call.
  execute: { beforeDispatch: true, run: (walk) => executeStage(walk.config, walk.call, walk.args, walk.tenant, walk.signal), settle: settleExecute },
  postProcess: { beforeDispatch: false, run: (walk) => postProcess(walk.call, walk.args, walk.value, walk.config.limits) },
};

/** The walk: PIPELINE_STAGES in its order, resolved to their steps once, here. */
const WALK: readonly { readonly stage: PipelineStage; readonly step: StageStep<unknown> }[] = PIPELINE_STAGES.flatMap((stage) => {
  const step = (STEPS as unknown as Partial<Record<PipelineStage, StageStep<unknown>>>)[stage];
  return step === undefined ? [] : [{ stage, step }];
});

export async function runParsedCall(config: PipelineConfig, call: ParsedCall, tenant: string | undefined, signal: AbortSignal): Promise<ToolResult> {
  // One literal per call (spreads hit a slow V8 path on this hot path).
  const walk: CallWalk = { config, call, tenant, signal, startedAt: performance.now(), metadata: undefined, approvalMs: undefined, args: call.args as JsonObject, value: undefined };
  let draft: DraftResult | undefined = call.failure === undefined ? undefined : draftFailure(call.failure.code, call.failure.message);
  try {
    // The walk is inline, not a function of its own: one promise less per call on the hot path.
    for (let index = 0; draft === undefined && index < WALK.length; index += 1) {
      const { stage, step } = WALK[index]!;
      if (step.beforeDispatch && signal.aborted) {
        draft = draftFailure('ABORTED_BEFORE_DISPATCH', `${call.name}: cancelled before it started`);
        break;
      }
      emitStage(config.observers, call.callId, stage, tenant);
      let outcome = step.run(walk);
      if (outcome instanceof Promise) outcome = await outcome;
      draft = step.settle === undefined ? (outcome as Verdict) : step.settle(walk, outcome);
    }
    if (draft === undefined) throw new Error('the post-process stage gave no result');
  } catch (error) {
    // The one outer catch: anything unexpected is still a result, and the operator hears of it.
    draft = draftFailure('TOOL_ERROR', toolErrorMessage(`${call.name}: internal failure`, error));
    reportError(config.observers, 'SCHEDULER_FAILED', `${call.name}: a pipeline stage failed unexpectedly`, error, { source: 'scheduler', callId: call.callId, tenant });
  }
  return resultStage(walk, draft);
}

function permission(walk: CallWalk): Verdict | Promise<Verdict> {
  const gate = permissionGate(walk.config, walk.call, walk.args, walk.tenant, walk.signal);
  // Only `ask` returns a promise: the time until it settles is the approver's.
  return gate instanceof Promise ? awaitApproval(walk, gate) : gateDraft(gate);
}

async function awaitApproval(walk: CallWalk, pending: Promise<GateOutcome>): Promise<Verdict> {
  const askedAt = performance.now();
  try {
    return gateDraft(await pending);
  } finally {
    walk.approvalMs = performance.now() - askedAt;
  }
}

function gateDraft(gate: GateOutcome): Verdict {
  return gate.allowed ? undefined : draftFailure(gate.code, gate.message);
}

function guards(walk: CallWalk): Verdict | Promise<Verdict> {
  if (walk.config.guards.length === 0) return undefined;
  return runGuards(walk.config, walk.call, walk.args, walk.tenant, walk.signal).then((denial) => (denial === undefined ? undefined : draftFailure('PERMISSION_DENIED', denial)));
}

function settleExecute(walk: CallWalk, outcome: ExecuteOutcome): Verdict {
  walk.metadata = outcome.metadata;
  if (!outcome.ok) return draftFailure(outcome.code, outcome.message);
  walk.value = outcome.value;
  return undefined;
}
