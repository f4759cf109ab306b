// Stage 6, which every call reaches whatever happened before: finalizeContent exactly once,
// then one normalized, frozen result.
import { containRejection } from '../util/contain-rejection.js';
import type { ResultCode } from '../errors/result-codes.js';
import { failureContent, type DraftResult, type ResultMetadata, type ToolResult } from '../result/tool-result.js';
import { toolErrorMessage } from '../result/thrown-failure.js';
import type { ExecContext } from '../tool/tool-definition.js';
import { emitStage } from './observe.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

export interface CallRecord {
  readonly config: PipelineConfig;
  readonly call: ParsedCall;
  readonly tenant: string | undefined;
  readonly signal: AbortSignal;
  /** performance.now() when the call's walk began: waiting behind a barrier is not its duration. */
  readonly startedAt: number;
  /** Set by the execute stage through exec.setMetadata. */
  metadata: ResultMetadata | undefined;
  /** Time spent waiting for an approver, reported apart so durations stay comparable. */
  approvalMs: number | undefined;
}

export function resultStage(record: CallRecord, draft: DraftResult): ToolResult {
  const { config, call, tenant, signal } = record;
  emitStage(config.observers, call.callId, 'result', tenant);
  let content = draft.content;
  // Copied before finalizeContent sees the draft, and frozen with it: a content transform
  // cannot rewrite the outcome's code or message.
  let error: { code: ResultCode; message: string } | undefined = draft.isError ? { code: draft.error.code, message: draft.error.message } : undefined;
  if (draft.isError) Object.freeze(draft.error);
  const finalize = call.tool?.definition.finalizeContent;
  if (finalize !== undefined) {
    const exec: ExecContext = { callId: call.callId, toolName: call.name, signal, tenant, setMetadata: () => undefined };
    try {
      const finalized: unknown = finalize(exec, Object.freeze(draft));
      containRejection(finalized); // an async one answers a promise: refused below, its rejection handled
      if (typeof finalized !== 'string') throw new Error('finalizeContent must return a string');
      // The last word on the content is held to the same limit as projectContent's.
      const maxOutputBytes = call.tool!.definition.maxOutputBytes ?? config.limits.maxOutputBytes;
      if (Buffer.byteLength(finalized, 'utf8') <= maxOutputBytes) content = finalized;
      else if (error === undefined) {
        error = { code: 'OUTPUT_TOO_LARGE', message: `${call.name}: finalizeContent's content is larger than ${maxOutputBytes} bytes` };
        content = failureContent('OUTPUT_TOO_LARGE', `${call.name}: the content is larger than this tool may return`);
      } // A failure keeps its own code and content.
    } catch (thrown) {
      // A success becomes the failure; a failure keeps its code, reason and content (a
      // transform that fails must not turn a call that never ran into "the tool threw").
      if (error === undefined) {
        const message = toolErrorMessage(`${call.name}: finalizeContent failed`, thrown);
        error = { code: 'TOOL_ERROR', message };
        content = failureContent('TOOL_ERROR', message);
      }
    }
  }
  const { approvalMs, metadata } = record;
  const durationMs = roundMs(performance.now() - record.startedAt - (approvalMs ?? 0));
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
