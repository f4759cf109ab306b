// A plugin classifier costs a task in the isolate; ask it only where its verdict can
// change the schedule. Skipping is always safe: a call without a verdict is exclusive.
import type { ParsedCall } from '@airlock/core';

/**
 * The calls with a sandboxed classifier that could share a parallel group with another
 * call that runs: a runnable neighbour (calls that failed parsing run nothing and never
 * split a group) that may be parallel too. A turn of one call never needs a verdict: it
 * runs alone either way.
 */
export function callsWorthClassifying(calls: readonly ParsedCall[], classifiedInSandbox: (call: ParsedCall) => boolean): ParsedCall[] {
  const runnable = calls.filter((call) => call.failure === undefined);
  const mayBeParallel = (call: ParsedCall | undefined): boolean => call?.tool?.definition.isConcurrencySafe !== undefined;
  return runnable.filter((call, index) => classifiedInSandbox(call) && (mayBeParallel(runnable[index - 1]) || mayBeParallel(runnable[index + 1])));
}
