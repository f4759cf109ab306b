// Stage 3: guards can only deny. The first denial ends the stage; a guard that throws
// denies too, so a faulty guard fails closed.
import type { JsonObject } from '../json/json-types.js';
import { hookFailureText } from '../result/thrown-failure.js';
import { ABORTED, untilAborted } from '../util/until-aborted.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

/** The denial, if a guard denied; undefined when all passed or the caller cancelled while one ran (the next stage answers that). */
export async function runGuards(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined, signal: AbortSignal): Promise<string | undefined> {
  for (const [index, guard] of config.guards.entries()) {
    try {
      const verdict: unknown = await untilAborted(Promise.resolve().then(() => guard({ callId: call.callId, toolName: call.name, args, tenant })), signal);
      if (verdict === ABORTED) return undefined;
      if (typeof verdict === 'object' && verdict !== null && 'deny' in verdict) {
        const reason = (verdict as { deny: unknown }).deny;
        return `${call.name}: denied by a guard (${typeof reason === 'string' && reason !== '' ? reason : `guard ${index}`})`;
      }
    } catch (error) {
      return `${call.name}: denied because guard ${index} failed (${hookFailureText(error)})`;
    }
  }
  return undefined;
}
