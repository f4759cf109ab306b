// The host end of one call's capability requests: only names the manifest granted, only
// JSON in and out, with the call's tenant and a signal that aborts when the call ends. What
// a host function is and what it knows about the call that asked are defined here too.
import { snapshotJson, type JsonValue } from '@airlock/core';
import type { CapabilityHandler } from '../worker/worker-protocol.js';
import type { LoadedPlugin } from './loaded-plugin.js';

/** What a capability knows about the call that asked: enough to scope by tenant, never host objects. */
export interface CapabilityContext {
  readonly tenant: string;
  readonly plugin: string;
  readonly tool: string;
  readonly callId: string;
  /** Aborts when the call ends (done, killed or cancelled). */
  readonly signal: AbortSignal;
}

/** A host function a manifest may be granted by name: JSON in, JSON out. */
export type Capability = (argument: JsonValue, context: CapabilityContext) => JsonValue | Promise<JsonValue>;

/** One call's capability traffic that reached the host, for its metadata: requests, JSON bytes each way. */
export interface CapabilityCounts {
  requests: number;
  bytesIn: number;
  bytesOut: number;
}

/**
 * The answer to a request of a call that has ended: none, ever. A new promise each time, held
 * by nothing but the request's own chain: one shared pending promise would keep every relay's
 * reaction to it, and the request message each reaction holds, for the life of the process
 * (a plugin firing 16 requests of 250 KiB at a slow capability and returning at once pinned
 * 150 MiB of the host's heap in 40 calls).
 */
function withheld(): Promise<never> {
  return new Promise<never>(() => undefined);
}

/** Answers one call's capability requests from the host's functions: granted names only, JSON only. */
export function capabilityHandler(plugin: LoadedPlugin, offered: ReadonlyMap<string, Capability>, context: CapabilityContext, counts: CapabilityCounts): CapabilityHandler {
  const granted = new Set(plugin.spec.capabilities);
  return async (name, json) => {
    counts.requests += 1;
    counts.bytesIn += Buffer.byteLength(json, 'utf8');
    const capability = granted.has(name) ? offered.get(name) : undefined;
    if (capability === undefined) throw new Error(`capability ${name} is not granted`);
    // The one door to the embedder's functions: once the call ended or its caller cancelled
    // it, no request of it runs one and no answer goes back, whichever host relayed it and
    // however late it came. Withheld, not refused: a refusal that raced the cancel would let
    // the plugin go on; unanswered, it waits where it is until its isolate is stopped.
    if (context.signal.aborted) return withheld();
    const answer = await capability(JSON.parse(json) as JsonValue, context);
    if (context.signal.aborted) return withheld();
    const text = JSON.stringify(snapshotJson(answer === undefined ? null : answer, { label: `capability ${name}'s answer` }));
    counts.bytesOut += Buffer.byteLength(text, 'utf8');
    return text;
  };
}
