// Stage 3: guards can only deny. The first denial ends the stage; a guard that throws
// denies too, so a faulty guard fails closed.
import type { JsonObject } from '../json/json-types.js';
import { hookFailureText } from '../result/thrown-failure.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

export async function runGuards(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined): Promise<string | undefined> {
  for (const [index, guard] of config.guards.entries()) {
    try {
      const verdict: unknown = await guard({ callId: call.callId, toolName: call.name, args, tenant });
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
