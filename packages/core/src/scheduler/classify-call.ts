// Only the literal `true` from isConcurrencySafe admits a call to a parallel group;
// missing, throwing, or anything else makes it an exclusive barrier.
import type { ParsedCall } from '../pipeline/parsed-call.js';
import { containRejection } from '../util/contain-rejection.js';

export type CallClass = 'parallel' | 'exclusive';

export function classifyCall(call: ParsedCall): CallClass {
  // A call that already failed parsing runs nothing, so it never needs to be a barrier.
  if (call.failure !== undefined) return 'parallel';
  const classify = call.tool?.definition.isConcurrencySafe;
  if (classify === undefined) return 'exclusive';
  try {
    const verdict: unknown = classify(call.args!);
    containRejection(verdict); // an async classifier answers a promise: exclusive, and its rejection handled
    return verdict === true ? 'parallel' : 'exclusive';
  } catch {
    return 'exclusive';
  }
}

/** Consecutive parallel calls form one group; each exclusive call is a group of its own. */
export function groupCalls(calls: readonly ParsedCall[]): { readonly kind: CallClass; readonly calls: readonly ParsedCall[] }[] {
  const groups: { kind: CallClass; calls: ParsedCall[] }[] = [];
  for (const call of calls) {
    const kind = classifyCall(call);
    const last = groups.at(-1);
    if (kind === 'parallel' && last?.kind === 'parallel') last.calls.push(call);
    else groups.push({ kind, calls: [call] });
  }
  return groups;
}
