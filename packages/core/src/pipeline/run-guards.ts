// Stage 3: guards can only deny. The first denial ends the stage; a guard that throws
// denies too, so a faulty guard fails closed.
import type { JsonObject } from '../json/json-types.js';
import { hookFailureText } from '../result/thrown-failure.js';
import { ABORTED, untilAborted } from '../util/until-aborted.js';
import { withinMs } from '../util/within-ms.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

/** The denial, if a guard denied; undefined when all passed or the caller cancelled while one ran (the next stage answers that). */
export async function runGuards(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined, signal: AbortSignal): Promise<string | undefined> {
  for (const [index, guard] of config.guards.entries()) {
    try {
      const answer: unknown = guard({ callId: call.callId, toolName: call.name, args, tenant });
      // A guard is host code, but one that never answers must not leave its call without a result.
      const verdict: unknown = isThenable(answer) ? await untilAborted(withinMs(Promise.resolve(answer), config.limits.guardTimeoutMs, GUARD_TIMED_OUT), signal) : answer;
      if (verdict === ABORTED) return undefined;
      if (typeof verdict === 'object' && verdict !== null && 'deny' in verdict) {
        const reason = (verdict as { deny: unknown }).deny;
        return `${call.name}: denied by a guard (${typeof reason === 'string' && reason !== '' ? reason : `guard ${index}`})`;
      }
    } catch (error) {
      // Compared by identity: instanceof runs a thrown Proxy's getPrototypeOf trap, which may throw.
      if (error === GUARD_TIMED_OUT) return `${call.name}: denied because guard ${index} did not answer within ${config.limits.guardTimeoutMs} ms`;
      return `${call.name}: denied because guard ${index} failed (${hookFailureText(error)})`;
    }
  }
  return undefined;
}

class GuardTimeout extends Error {}
const GUARD_TIMED_OUT = new GuardTimeout();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
