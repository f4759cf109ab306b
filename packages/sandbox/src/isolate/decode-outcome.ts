// Turns what a realm sent back into an outcome. The realm is untrusted: its strings are
// parsed defensively, sizes re-checked on this side, and only codes a plugin may end
// with are accepted from it; every limit verdict is the host's own.
import type { SandboxFailureCode, SandboxOutcome, Usage } from '../worker/worker-protocol.js';
import { holdsMoreContainers, MAX_RESULT_CONTAINERS } from './json-containers.js';

/** Codes a realm may report; CPU, memory, timeout and crash verdicts come only from the host. */
const REALM_CODES: ReadonlySet<string> = new Set(['TOOL_ERROR', 'OUTPUT_TOO_LARGE', 'INVALID_TOOL_OUTPUT']);
const MAX_MESSAGE = 4000;
/** The bootstrap's answer when the plugin's module never finished its top level (realm.ts's UNLOADED). */
const UNLOADED_KIND = '';
const UNLOADED_PAYLOAD = 'unloaded';
const UNLOADED_MESSAGE = 'the plugin module did not finish loading (a top-level await is not supported)';

/** A call's report: kind `ok` with the result's JSON, or a realm code with a message. */
export function decodeReport(kind: string, payload: string, maxOutputBytes: number, usage: Usage): SandboxOutcome {
  if (kind === 'ok') {
    if (payload.length > maxOutputBytes || Buffer.byteLength(payload, 'utf8') > maxOutputBytes) {
      return { ok: false, code: 'OUTPUT_TOO_LARGE', message: "the result is larger than this tool may return", usage };
    }
    // Counted here, on the worker's thread, not parsed: parsed once, where it is used
    // (plugin/plugin-tools.ts); a parse here only to check it cost a worker 1.2 ms for a 150 KB result.
    if (holdsMoreContainers(payload, MAX_RESULT_CONTAINERS)) {
      return { ok: false, code: 'OUTPUT_TOO_LARGE', message: `the result holds more than ${MAX_RESULT_CONTAINERS} objects and arrays`, usage };
    }
    return { ok: true, json: payload, usage };
  }
  if (kind === UNLOADED_KIND && payload === UNLOADED_PAYLOAD) return { ok: false, code: 'TOOL_ERROR', message: UNLOADED_MESSAGE, usage };
  if (REALM_CODES.has(kind)) return { ok: false, code: kind as SandboxFailureCode, message: payload.slice(0, MAX_MESSAGE), usage };
  return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned an unexpected shape', usage };
}

/** A describe or classify answer: one JSON envelope the bootstrap assembled. */
export function decodeEnvelope(text: unknown, usage: Usage): SandboxOutcome {
  if (typeof text !== 'string') return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned something other than serialized JSON', usage };
  if (text === `${UNLOADED_KIND}\u0000${UNLOADED_PAYLOAD}`) return { ok: false, code: 'TOOL_ERROR', message: UNLOADED_MESSAGE, usage };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned malformed JSON', usage };
  }
  if (typeof parsed !== 'object' || parsed === null) return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned an unexpected shape', usage };
  const record = parsed as Record<string, unknown>;
  if (record.ok === true && Object.hasOwn(record, 'value')) {
    try {
      return { ok: true, json: JSON.stringify(record.value), usage };
    } catch {
      // Only a tool list can nest so deep: a schema nested past what this thread's stack takes.
      return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the tool list is nested too deeply to read: a schema may nest 256 levels', usage };
    }
  }
  if (record.ok === false && typeof record.code === 'string' && typeof record.message === 'string') return decodeReport(record.code, record.message, 0, usage);
  return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned an unexpected shape', usage };
}
