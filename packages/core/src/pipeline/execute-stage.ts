// Stage 4: runs the body under the host deadline. The only stage that may replace the
// abort signal, and every replacement is fused with the caller's.
import { ToolCallError } from '../errors/result-codes.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';
import type { ResultMetadata } from '../result/tool-result.js';
import type { ExecContext } from '../tool/tool-definition.js';
import { mergeAbortSignals } from '../util/merge-abort-signals.js';
import { messageOf, sanitizeMessage } from '../util/sanitize-message.js';
import type { ParsedCall, PipelineConfig } from './pipeline-config.js';

export type ExecuteOutcome =
  | { readonly ok: true; readonly value: unknown; readonly metadata: ResultMetadata | undefined }
  | { readonly ok: false; readonly code: ToolCallError['code']; readonly message: string; readonly metadata: ResultMetadata | undefined };

class DeadlineReason extends Error {}

export async function executeStage(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined, callerSignal: AbortSignal): Promise<ExecuteOutcome> {
  const definition = call.tool!.definition;
  if (callerSignal.aborted) return { ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: `${call.name}: cancelled before it started`, metadata: undefined };
  const deadline = new AbortController();
  const signal = mergeAbortSignals(callerSignal, deadline.signal);
  let metadata: ResultMetadata | undefined;
  let bodyStarted = false;

  const makeExec = (execSignal: AbortSignal): ExecContext => ({
    callId: call.callId,
    toolName: call.name,
    signal: execSignal,
    tenant,
    setMetadata: (next) => {
      metadata = { ...metadata, ...next };
    },
  });

  // Wrappers nest outermost-first; each `next` fuses any replacement signal back with the current one.
  const invoke = (depth: number, execSignal: AbortSignal): Promise<JsonValue> => {
    const exec = makeExec(execSignal);
    const wrapper = config.executeWrappers[depth];
    if (wrapper === undefined) {
      bodyStarted = true;
      return Promise.resolve(definition.execute(args, exec));
    }
    return wrapper(exec, (replace) => invoke(depth + 1, replace?.signal === undefined ? execSignal : mergeAbortSignals(execSignal, replace.signal)));
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  if (definition.timeoutMs !== undefined) {
    const timeoutMs = definition.timeoutMs;
    timer = setTimeout(() => deadline.abort(new DeadlineReason(`${call.name}: timed out after ${timeoutMs} ms`)), timeoutMs);
  }

  let body: Promise<JsonValue> | undefined;
  try {
    body = Promise.resolve().then(() => invoke(0, signal));
    const value = await Promise.race([body, stopped]);
    return { ok: true, value, metadata };
  } catch (error) {
    if (body !== undefined && (signal.aborted || error === signal.reason)) reportLate(config, call, body);
    if (deadline.signal.aborted && !callerSignal.aborted) {
      return { ok: false, code: 'TIMEOUT', message: `${call.name}: timed out after ${definition.timeoutMs} ms`, metadata };
    }
    if (callerSignal.aborted && !ToolCallError.isInstance(error)) {
      return bodyStarted
        ? { ok: false, code: 'ABORTED', message: `${call.name}: cancelled while running`, metadata }
        : { ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: `${call.name}: cancelled before it started`, metadata };
    }
    if (ToolCallError.isInstance(error)) return { ok: false, code: error.code, message: error.message, metadata };
    return { ok: false, code: 'TOOL_ERROR', message: `${call.name}: ${sanitizeMessage(messageOf(error))}`, metadata };
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

function reportLate(config: PipelineConfig, call: ParsedCall, body: Promise<unknown>): void {
  body.then(
    () => notifyLate(config, call, 'fulfilled'),
    () => notifyLate(config, call, 'rejected'),
  );
}

function notifyLate(config: PipelineConfig, call: ParsedCall, outcome: 'fulfilled' | 'rejected'): void {
  try {
    config.observers.onLateSettlement?.({ callId: call.callId, toolName: call.name, outcome });
  } catch {
    // Observers are contained: they can never change or break a call.
  }
}
