// Runs the calls of one model turn: the parse stage for all, classify, then parallel groups as a
// rolling pool (at most maxParallel at once) and exclusive calls as barriers.
// Results come back, and are committed to observers, in the model's call order.
import { containRejection } from '../util/contain-rejection.js';
import type { JsonObject } from '../json/json-types.js';
import type { ToolCallRequest } from '../providers/provider-format.js';
import { failureContent, type ToolResult } from '../result/tool-result.js';
import { notifyObserver, reportError } from '../pipeline/observe.js';
import { parseStage } from '../pipeline/parse-stage.js';
import type { ParsedCall } from '../pipeline/parsed-call.js';
import type { PipelineConfig } from '../pipeline/pipeline-config.js';
import { runParsedCall } from '../pipeline/run-call.js';
import { NEVER_ABORTED } from '../util/merge-abort-signals.js';
import { groupCalls } from './classify-call.js';
import { untilAborted } from '../util/until-aborted.js';
import { withinMs } from '../util/within-ms.js';

/** Compared by identity: what a preSchedule hook that ran out of time is rejected with. */
const PRESCHEDULE_TIMED_OUT: unique symbol = Symbol('preSchedule timed out');

export interface TurnOptions {
  readonly signal?: AbortSignal;
  readonly tenant?: string;
}

/**
 * Preparation before the turn's calls are classified, handed only the calls the policy allows
 * outright (never one it denies or asks about: a sandboxed classifier runs plugin code with a
 * call's arguments, which a call the gate will stop must never show to its plugin).
 */
export type PreSchedule = (calls: readonly ParsedCall[], turn: { readonly signal: AbortSignal; readonly tenant: string | undefined }) => Promise<void>;

export interface SchedulerConfig extends PipelineConfig {
  readonly maxParallel: number;
  /** Async preparation before classification (e.g. a sandbox asking plugins for their verdicts). */
  readonly preSchedule?: PreSchedule | undefined;
}

export async function runTurn(config: SchedulerConfig, requests: readonly ToolCallRequest[], options: TurnOptions = {}): Promise<ToolResult[]> {
  const signal = options.signal ?? NEVER_ABORTED;
  const tenant = options.tenant;
  const parsed = await parseStage(config, requests, tenant, signal);
  const results: (ToolResult | undefined)[] = new Array<ToolResult | undefined>(parsed.length);
  let committed = 0;

  const commit = (call: ParsedCall, result: ToolResult): void => {
    results[call.index] = result;
    while (committed < results.length && results[committed] !== undefined) {
      const ready = results[committed] as ToolResult;
      committed += 1;
      notifyObserver(config.observers, 'onResult', config.observers.onResult, ready, ready.callId, tenant);
    }
  };

  const run = async (call: ParsedCall): Promise<void> => {
    let result: ToolResult;
    try {
      result = await runParsedCall(config, call, tenant, signal);
    } catch (error) {
      reportError(config.observers, 'SCHEDULER_FAILED', `${call.name}: the call failed outside its pipeline`, error, { source: 'scheduler', callId: call.callId, tenant });
      result = emergencyResult(call);
    }
    commit(call, result);
  };

  try {
    const preSchedule = config.preSchedule;
    if (preSchedule !== undefined && !signal.aborted) {
      // No verdict means exclusive: a preparation that throws, even synchronously, only costs parallelism.
      // Waited for only while the turn is wanted: cancelled, its calls are answered at once.
      const permitted = parsed.filter((call) => call.failure === undefined && allowedOutright(config, call, tenant));
      // One that never settles would hold the turn for ever: it is given limits.preScheduleTimeoutMs.
      const prepared = withinMs(Promise.resolve().then(() => preSchedule(permitted, { signal, tenant })), config.limits.preScheduleTimeoutMs, PRESCHEDULE_TIMED_OUT);
      await untilAborted(prepared, signal).catch((error: unknown) => {
        // A preparation stopped by the turn's own cancellation did not fail.
        if (signal.aborted) return;
        const message = error === PRESCHEDULE_TIMED_OUT ? `a preSchedule hook did not finish within ${config.limits.preScheduleTimeoutMs} ms; the turn runs without its preparation` : 'a preSchedule hook failed; the turn runs without its preparation';
        reportError(config.observers, 'PRESCHEDULE_FAILED', message, error === PRESCHEDULE_TIMED_OUT ? undefined : error, { source: 'preSchedule', tenant });
      });
    }
    for (const group of groupCalls(parsed)) {
      if (group.kind === 'exclusive' || group.calls.length === 1) await run(group.calls[0] as ParsedCall);
      else await runPool(group.calls, Math.max(1, config.maxParallel), run);
    }
  } catch (error) {
    // Whatever failed, no exception leaves the turn: the operator hears of it, the calls are answered below.
    reportError(config.observers, 'SCHEDULER_FAILED', 'the scheduler failed; calls it had not finished are answered TOOL_ERROR', error, { source: 'scheduler', tenant });
  } finally {
    // Every call still gets exactly one result.
    for (const call of parsed) if (results[call.index] === undefined) commit(call, emergencyResult(call));
  }
  return results as ToolResult[];
}

/**
 * The policy allows this call as it stands (asked again at the gate, which decides). A policy
 * that throws or answers anything else allows nothing here.
 */
function allowedOutright(config: SchedulerConfig, call: ParsedCall, tenant: string | undefined): boolean {
  try {
    const decided = config.policy.decide(call.name, call.args as JsonObject, tenant) as { decision?: unknown } | undefined;
    containRejection(decided);
    return decided?.decision === 'allow';
  } catch {
    return false;
  }
}

/** A rolling pool: a slot that frees up starts the next call at once. */
async function runPool(calls: readonly ParsedCall[], cap: number, run: (call: ParsedCall) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls.length) {
      const call = calls[next] as ParsedCall;
      next += 1;
      await run(call);
    }
  };
  await Promise.all(Array.from({ length: Math.min(cap, calls.length) }, worker));
}

function emergencyResult(call: ParsedCall): ToolResult {
  const message = `${call.name}: the scheduler failed before this call finished`;
  const error = Object.freeze({ code: 'TOOL_ERROR' as const, message });
  return Object.freeze({ callId: call.callId, name: call.name, content: failureContent('TOOL_ERROR', message), durationMs: 0, isError: true, error });
}
