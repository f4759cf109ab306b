// Results and tool messages are keyed by call id, so within one turn an id names one call.
// The first call with an id keeps it and runs; each later one becomes INVALID_ARGS, which
// the model can fix by re-issuing the call under a fresh id.
import type { ParsedCall } from './parsed-call.js';

export function rejectDuplicateIds(calls: readonly ParsedCall[]): ParsedCall[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    if (!seen.has(call.callId)) {
      seen.add(call.callId);
      return call;
    }
    const id = JSON.stringify(call.callId.length > 64 ? `${call.callId.slice(0, 64)}…` : call.callId);
    return {
      index: call.index,
      callId: call.callId,
      name: call.name,
      tool: call.tool,
      args: undefined,
      failure: { code: 'INVALID_ARGS', message: `${call.name}: call id ${id} is already used by an earlier call in this turn, which keeps it (answered on its own); this one did not run: re-issue it under an id of its own` },
    };
  });
}
