// Stage 1, for a whole turn at once: the scheduler classifies parsed calls, so every call
// of the turn is parsed before any of them runs. Each call's `parse` event is emitted here.
// Never throws: a call that cannot even be read still becomes a ParsedCall with a failure.
import { containRejection } from '../util/contain-rejection.js';
import type { ToolCallRequest } from '../providers/provider-format.js';
import { rejectDuplicateIds } from './duplicate-call-ids.js';
import { emitStage } from './observe.js';
import { parseCall } from './parse-call.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

/**
 * Parsing and validating runs on the embedder's main thread, which every tenant shares: a turn
 * of calls that each take long (a megabyte of arguments against a costly schema: up to a few
 * hundred milliseconds each) lets the event loop in once this long has passed, so one turn
 * holds the thread for a call's time, not the sum of its calls'.
 */
const YIELD_AFTER_MS = 10;

export async function parseStage(config: PipelineConfig, requests: readonly ToolCallRequest[], tenant: string | undefined, signal: AbortSignal): Promise<ParsedCall[]> {
  const standIn = standInIds(requests);
  // Asked only when a call names no tool: which tools its answer may list. Remembered for the
  // turn: a turn of unknown names would otherwise ask the policy tools x rules times per call.
  const asked = new Map<string, boolean>();
  const listable = (name: string): boolean => {
    let answer = asked.get(name);
    if (answer === undefined) asked.set(name, (answer = !deniedOutright(config, name, tenant)));
    return answer;
  };
  const pending: (ParsedCall | Promise<ParsedCall>)[] = [];
  // A turn with no zod tool has nothing to wait for, and pays for no await.
  let awaiting = false;
  let since = performance.now();
  // By index, not map: a sparse list's holes are calls answered like any other.
  for (let index = 0; index < requests.length; index += 1) {
    // A zod-authored tool's arguments are parsed by zod asynchronously (validation/zod-arguments.ts),
    // each bounded by guardTimeoutMs: awaited together, so a turn waits for its slowest, not their sum.
    const parsed = safeParse(config, requests[index] as ToolCallRequest, index, standIn, listable, signal);
    if (parsed instanceof Promise) awaiting = true;
    pending.push(parsed);
    if (index + 1 < requests.length && performance.now() - since > YIELD_AFTER_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
  const parsed = rejectDuplicateIds(awaiting ? await Promise.all(pending) : (pending as ParsedCall[]));
  if (config.observers.onStage !== undefined) for (const call of parsed) emitStage(config.observers, call.callId, 'parse', tenant);
  return parsed;
}

/**
 * Ids for calls that have none: `call-<index>`, made unique against every id the turn's calls
 * do carry, so a stand-in never files a result under a real call's id.
 */
function standInIds(requests: readonly ToolCallRequest[]): (index: number) => string {
  // Read only when a call lacks an id: the per-turn path of calls that have theirs pays nothing.
  let taken: Set<string> | undefined;
  const idsInUse = (): Set<string> => {
    const ids = new Set<string>();
    for (let index = 0; index < requests.length; index += 1) {
      try {
        const id = requests[index]?.id;
        if (id !== undefined && id !== null && id !== '') ids.add(String(id));
      } catch {
        // an id that cannot be read gets a stand-in too
      }
    }
    return ids;
  };
  return (index) => {
    taken ??= idsInUse();
    let id = `call-${index}`;
    while (taken.has(id)) id += '~';
    taken.add(id);
    return id;
  };
}

/** A custom policy's deniesOutright is the host's code: one that throws hides nothing it was asked about. */
function deniedOutright(config: PipelineConfig, name: string, tenant: string | undefined): boolean {
  try {
    const denied: unknown = config.policy.deniesOutright?.(name, tenant);
    containRejection(denied);
    return denied === true;
  } catch {
    return true;
  }
}

/** A call whose very fields cannot be read (a throwing getter or toString) is still answered. */
function safeParse(config: PipelineConfig, request: ToolCallRequest, index: number, standIn: (index: number) => string, listable: (name: string) => boolean, signal: AbortSignal): ParsedCall | Promise<ParsedCall> {
  try {
    return parseCall(config.registry, request, index, config.limits, standIn, listable, signal.aborted, signal);
  } catch {
    let callId: string | undefined;
    try {
      if (typeof request.id === 'string' && request.id !== '') callId = request.id;
    } catch {
      // a stand-in below
    }
    return { index, callId: callId ?? standIn(index), name: 'unknown', tool: undefined, args: undefined, failure: { code: 'INVALID_ARGS', message: 'this tool call could not be read (its id, name or arguments are not plain data)' } };
  }
}
