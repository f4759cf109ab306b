// Stage 4: runs the body under the host deadline. The only stage that may replace the
// abort signal, and every replacement is fused with the caller's.
import { AirlockError } from '../errors/airlock-error.js';
import { ToolCallError } from '../errors/tool-call-error.js';
import { snapshotJson } from '../json/snapshot-json.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';
import type { ResultMetadata } from '../result/tool-result.js';
import type { ExecContext } from '../tool/tool-definition.js';
import { NEVER_ABORTED, linkAbortSignal, mergeAbortSignals } from '../util/merge-abort-signals.js';
import { thrownFailure } from '../result/thrown-failure.js';
import { onAbort } from '../util/on-abort.js';
import { notifyObserver } from './observe.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

export type ExecuteOutcome =
  | { readonly ok: true; readonly value: unknown; readonly metadata: ResultMetadata | undefined }
  | { readonly ok: false; readonly code: ToolCallError['code']; readonly message: string; readonly metadata: ResultMetadata | undefined };

export async function executeStage(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined, callerSignal: AbortSignal): Promise<ExecuteOutcome> {
  const definition = call.tool!.definition;
  if (callerSignal.aborted) return { ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: `${call.name}: cancelled before it started`, metadata: undefined };
  let metadata: ResultMetadata | undefined;
  let bodyStarted = false;
  /** invoke's refusal to start a body (the call was cancelled), when it refused. */
  let refused: ToolCallError | undefined;
  let deadlinePassed = false;

  const makeExec = (execSignal: AbortSignal): ExecContext => ({
    callId: call.callId,
    toolName: call.name,
    signal: execSignal,
    tenant,
    setMetadata: (next) => {
      // Copied as frozen JSON now: the result is frozen, so it must not hold the tool's live
      // objects (changed after the call) or what JSON cannot carry. Refused: an AirlockError to the tool.
      const copy = snapshotJson(next, { label: `${call.name}: setMetadata's argument` });
      if (copy === null || typeof copy !== 'object' || Array.isArray(copy)) throw new AirlockError('INVALID_OPTION', `${call.name}: setMetadata takes an object of JSON values`, { path: 'metadata' });
      metadata = { ...metadata, ...(copy as ResultMetadata) };
    },
  });

  // Wrappers nest outermost-first; each `next` fuses any replacement signal back with the current one.
  // async, so a body or wrapper that throws synchronously still becomes a rejection.
  const invoke = async (depth: number, execSignal: AbortSignal): Promise<JsonValue> => {
    const wrapper = config.executeWrappers[depth];
    if (wrapper === undefined) {
      // A wrapper that waited (a rate limiter, a lock) past the call's cancellation or deadline:
      // the call is already answered as not run (or timed out), so its body must not run now.
      if (execSignal.aborted) throw (refused = new ToolCallError('ABORTED_BEFORE_DISPATCH', `${call.name}: cancelled before it started`));
      bodyStarted = true;
      return definition.execute(args, makeExec(execSignal));
    }
    return wrapper(makeExec(execSignal), (replace) => (replace?.signal === undefined ? invoke(depth + 1, execSignal) : untilReplacementAborts(invoke(depth + 1, mergeAbortSignals(execSignal, replace.signal)), replace.signal, execSignal, call.name, () => bodyStarted, (work) => reportLate(config, call, tenant, work))));
  };

  const timeoutMs = definition.timeoutMs;
  // Fast path: nothing can stop this call, so there is nothing to race.
  if (timeoutMs === undefined && callerSignal === NEVER_ABORTED) {
    try {
      return { ok: true, value: await invoke(0, NEVER_ABORTED), metadata };
    } catch (error) {
      return thrownOutcome(call.name, error, metadata, bodyStarted && error === refused);
    }
  }

  const scope = linkAbortSignal(callerSignal);
  const signal = scope.signal;
  // What ends the wait before the body settles: the deadline, or a cancellation that comes
  // while no body has started yet (a wrapper still waiting). A body already started is let
  // settle (DESIGN.md, scheduling): it has the aborted signal, a sandboxed one is killed, and
  // its own outcome is the result, so the model is told what happened and an exclusive call
  // never overlaps the next turn's. Its deadline still ends the wait.
  let stop: (reason: unknown) => void = () => undefined;
  let stoppedBeforeSettling = false;
  const stopped = new Promise<never>((_, reject) => {
    stop = (reason) => {
      stoppedBeforeSettling = true;
      reject(reason);
    };
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
  // timeoutMs is host-only: the message says a deadline passed, not which.
  const timedOut = `${call.name}: timed out (the host's deadline for this tool passed)`;
  if (timeoutMs !== undefined) {
    timer = setTimeout(() => {
      deadlinePassed = true;
      const reason = new Error(timedOut);
      scope.abort(reason);
      stop(reason);
    }, timeoutMs);
  }
  const onCallerAbort = (): void => {
    if (!bodyStarted) stop(signal.reason);
  };
  signal.addEventListener('abort', onCallerAbort, { once: true });

  const body = invoke(0, signal);
  try {
    const value = await Promise.race([body, stopped]);
    // A body that held the event loop past its deadline settles before the timer can fire:
    // the deadline passed all the same.
    if (performance.now() > deadline && !callerSignal.aborted) return { ok: false, code: 'TIMEOUT', message: timedOut, metadata };
    return { ok: true, value, metadata };
  } catch (error) {
    if (stoppedBeforeSettling) reportLate(config, call, tenant, body);
    if (deadlinePassed && !callerSignal.aborted) return { ok: false, code: 'TIMEOUT', message: timedOut, metadata };
    if (callerSignal.aborted && !ToolCallError.isInstance(error)) {
      // Answered before a wrapper let the body start: it never will (invoke refuses it).
      if (!bodyStarted) return { ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: `${call.name}: cancelled before it started`, metadata };
      return { ok: false, code: 'ABORTED', message: `${call.name}: cancelled while running`, metadata };
    }
    return thrownOutcome(call.name, error, metadata, bodyStarted && error === refused);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onCallerAbort);
    scope.dispose();
  }
}

/**
 * A wrapper's own signal (a deadline, a scope) ends the call when it aborts, even if the body
 * never looks at it: TIMEOUT for a timeout's abort, else ABORTED (ABORTED_BEFORE_DISPATCH
 * before the body started), and a started body's later settling is reported. An abort that
 * came through the call's own signal (a replacement made with AbortSignal.any of it) is the
 * caller's cancel or the host's deadline: the execute stage answers it, as if no wrapper had
 * replaced the signal (a started body is let settle).
 */
function untilReplacementAborts<T>(work: Promise<T>, replacement: AbortSignal, current: AbortSignal, name: string, bodyStarted: () => boolean, abandon: (work: Promise<T>) => void): Promise<T> {
  // Already aborted: the body is never started (its own check refuses it), nothing to race.
  if (replacement.aborted) return work;
  return new Promise<T>((resolve, reject) => {
    const stopWatching = onAbort(replacement, () => {
      if (current.aborted) return;
      const started = bodyStarted();
      if (started) abandon(work);
      if ((replacement.reason as { name?: unknown } | undefined)?.name === 'TimeoutError') reject(new ToolCallError('TIMEOUT', `${name}: timed out (a deadline the host set for this call passed)`));
      else reject(started ? new ToolCallError('ABORTED', `${name}: cancelled while running`) : new ToolCallError('ABORTED_BEFORE_DISPATCH', `${name}: cancelled before it started`));
    });
    work.then(resolve, reject).finally(stopWatching);
  });
}

/**
 * `refusedAfterStart`: invoke refused to start a body because the call was cancelled, after an
 * earlier body of this call had started. A wrapper that calls next again (a retry) gets that
 * refusal, but the model must hear that something ran. (A body's own ABORTED_BEFORE_DISPATCH,
 * such as a sandbox's call no executor took, is its own answer.)
 */
function thrownOutcome(name: string, error: unknown, metadata: ResultMetadata | undefined, refusedAfterStart: boolean): ExecuteOutcome {
  if (refusedAfterStart) return { ok: false, code: 'ABORTED', message: `${name}: cancelled while running`, metadata };
  const failure = thrownFailure(name, error);
  return { ok: false, code: failure.code, message: failure.message, metadata };
}

function reportLate(config: PipelineConfig, call: ParsedCall, tenant: string | undefined, body: Promise<unknown>): void {
  const notify = (outcome: 'fulfilled' | 'rejected'): void =>
    notifyObserver(config.observers, 'onLateSettlement', config.observers.onLateSettlement, { callId: call.callId, toolName: call.name, outcome }, call.callId, tenant);
  body.then(
    () => notify('fulfilled'),
    () => notify('rejected'),
  );
}
