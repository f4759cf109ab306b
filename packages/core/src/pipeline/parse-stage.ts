// Stage 1, for a whole turn at once: the scheduler classifies parsed calls, so every call
// of the turn is parsed before any of them runs. Each call's `parse` event is emitted here.
// Never throws: a call that cannot even be read still becomes a ParsedCall with a failure.
import type { ToolCallRequest } from '../providers/provider-format.js';
import { rejectDuplicateIds } from './duplicate-call-ids.js';
import { emitStage } from './observe.js';
import { parseCall } from './parse-call.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

export function parseStage(config: PipelineConfig, requests: readonly ToolCallRequest[], tenant: string | undefined): ParsedCall[] {
  // Array.from visits a sparse list's holes too (map skips them): each is a call answered like any other.
  const parsed = rejectDuplicateIds(Array.from(requests, (request, index) => safeParse(config, request, index)));
  if (config.observers.onStage !== undefined) for (const call of parsed) emitStage(config.observers, call.callId, 'parse', tenant);
  return parsed;
}

/** A call whose very fields cannot be read (a throwing getter or toString) is still answered. */
function safeParse(config: PipelineConfig, request: ToolCallRequest, index: number): ParsedCall {
  try {
    return parseCall(config.registry, request, index, config.limits);
  } catch {
    let callId = `call-${index}`;
    try {
      if (typeof request.id === 'string') callId = request.id;
    } catch {
      // keep the positional id
    }
    return { index, callId, name: 'unknown', tool: undefined, args: undefined, failure: { code: 'INVALID_ARGS', message: 'this tool call could not be read (its id, name or arguments are not plain data)' } };
  }
}
