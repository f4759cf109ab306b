// Walks one parsed call through the stages after parse, and guarantees exactly one
// frozen result and exactly one finalizeContent, whatever fails on the way.
import type { ResultCode } from '../errors/result-codes.js';
import type { JsonObject } from '../json/json-types.js';
import { draftFailure, failureContent, type DraftResult, type ResultMetadata, type ToolResult } from '../result/tool-result.js';
import type { ExecContext } from '../tool/tool-definition.js';
import { messageOf, sanitizeMessage } from '../util/sanitize-message.js';
import { executeStage } from './execute-stage.js';
import { permissionGate } from './permission-gate.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';
import { postProcess } from './post-process.js';
import { runGuards } from './run-guards.js';
import type { PipelineStage } from './stage-order.js';

export async function runParsedCall(config: PipelineConfig, call: ParsedCall, tenant: string | undefined, signal: AbortSignal): Promise<ToolResult> {
  // Timed from the call's own start, not the turn's: waiting behind a barrier is not its duration.
  const startedAt = performance.now();
  let metadata: ResultMetadata | undefined;
  // Waiting for a person is reported apart, so durations stay comparable between calls.
  let approvalMs: number | undefined;
  let draft: DraftResult;
  try {
    draft = await walkStages(config, call, tenant, signal, (next) => {
      metadata = next;
    }, (waited) => {
      approvalMs = waited;
    });
  } catch (error) {
    // The one outer catch: anything unexpected is still a result.
    draft = draftFailure('TOOL_ERROR', `${call.name}: internal failure: ${sanitizeMessage(messageOf(error))}`);
  }
  return finish(config, call, tenant, signal, draft, metadata, startedAt, approvalMs);
}

async function walkStages(
  config: PipelineConfig,
  call: ParsedCall,
  tenant: string | undefined,
  signal: AbortSignal,
  keepMetadata: (metadata: ResultMetadata | undefined) => void,
  keepApprovalMs: (waited: number) => void,
): Promise<DraftResult> {
  if (call.failure !== undefined) return draftFailure(call.failure.code, call.failure.message);
  const args = call.args as JsonObject;
  const beforeDispatch = (): DraftResult | undefined => (signal.aborted ? draftFailure('ABORTED_BEFORE_DISPATCH', `${call.name}: cancelled before it started`) : undefined);

  let stopped = beforeDispatch();
  if (stopped) return stopped;
  stage(config, call, 'permission');
  let gate = permissionGate(config, call, args, tenant, signal);
  if (gate instanceof Promise) {
    // Only `ask` returns a promise: the time until it settles is the approver's.
    const askedAt = performance.now();
    try {
      gate = await gate;
    } finally {
      keepApprovalMs(performance.now() - askedAt);
    }
  }
  if (!gate.allowed) return draftFailure(gate.code, gate.message);

  if ((stopped = beforeDispatch())) return stopped;
  stage(config, call, 'guards');
  if (config.guards.length > 0) {
    const denial = await runGuards(config, call, args, tenant);
    if (denial !== undefined) return draftFailure('PERMISSION_DENIED', denial);
  }

  if ((stopped = beforeDispatch())) return stopped;
  stage(config, call, 'execute');
  const outcome = await executeStage(config, call, args, tenant, signal);
  keepMetadata(outcome.metadata);
  if (!outcome.ok) return draftFailure(outcome.code, outcome.message);

  stage(config, call, 'postProcess');
  return postProcess(call, args, outcome.value, config.limits);
}

function finish(config: PipelineConfig, call: ParsedCall, tenant: string | undefined, signal: AbortSignal, draft: DraftResult, metadata: ResultMetadata | undefined, startedAt: number, approvalMs: number | undefined): ToolResult {
  let content = draft.content;
  let error: { code: ResultCode; message: string } | undefined = draft.isError ? draft.error : undefined;
  const finalize = call.tool?.definition.finalizeContent;
  if (finalize !== undefined) {
    const exec: ExecContext = { callId: call.callId, toolName: call.name, signal, tenant, setMetadata: () => undefined };
    try {
      const finalized: unknown = finalize(exec, Object.freeze(draft));
      if (typeof finalized !== 'string') throw new Error('finalizeContent must return a string');
      content = finalized;
    } catch (thrown) {
      const message = `${call.name}: finalizeContent failed: ${sanitizeMessage(messageOf(thrown))}`;
      error = { code: 'TOOL_ERROR', message };
      content = failureContent('TOOL_ERROR', message);
    }
  }
  stage(config, call, 'result');
  const durationMs = roundMs(performance.now() - startedAt - (approvalMs ?? 0));
  const result: ToolResult = error === undefined && !draft.isError
    ? { callId: call.callId, name: call.name, content, durationMs, isError: false, value: draft.value }
    : { callId: call.callId, name: call.name, content, durationMs, isError: true, error: Object.freeze({ code: error!.code, message: error!.message }) };
  if (approvalMs !== undefined) (result as { approvalMs?: number }).approvalMs = roundMs(approvalMs);
  if (metadata !== undefined) (result as { metadata?: ResultMetadata }).metadata = Object.freeze(metadata);
  return Object.freeze(result);
}

function roundMs(ms: number): number {
  return Math.max(0, Math.round(ms * 1000) / 1000);
}

function stage(config: PipelineConfig, call: ParsedCall, name: PipelineStage): void {
  const onStage = config.observers.onStage;
  if (onStage === undefined) return;
  try {
    onStage({ callId: call.callId, stage: name });
  } catch {
    // Observers are contained.
  }
}
