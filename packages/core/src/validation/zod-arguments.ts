// A zod-authored tool's arguments as its body will receive them (and, at the end, its output's refinements): zod's own parse (defaults,
// transforms, refinements) runs in the parse stage, after the JSON Schema check, so the
// permission rules, guards and approver decide on the very arguments the body gets. Run
// inside execute, a `.trim()` or `.default('/etc/shadow')` turned arguments a deny rule had
// passed into ones it would have refused.
import type { z } from 'zod';
import { AirlockError } from '../errors/airlock-error.js';
import { freezeParsedJson } from '../json/freeze-parsed-json.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';
import { snapshotJson } from '../json/snapshot-json.js';
import { messageOf } from '../util/sanitize-message.js';
import { withinMs } from '../util/within-ms.js';
import { listProblems } from './describe-errors.js';

export type ZodArgumentsOutcome =
  | { readonly ok: true; readonly value: JsonObject }
  | { readonly ok: false; readonly code: 'INVALID_ARGS' | 'TOOL_ERROR'; readonly message: string };

/**
 * Parses `args` (already checked against the tool's JSON Schema) with the tool's zod schema;
 * never rejects. Zod's asynchronous parse: a refinement or transform may answer with a promise
 * (the synchronous parse drops it, and its rejection ended the host process: an outside
 * tester's find), waited for at most `timeoutMs`.
 */
export async function parseZodArguments(schema: z.ZodType, args: JsonObject, maxDepth: number, timeoutMs: number): Promise<ZodArgumentsOutcome> {
  let parsed: Awaited<ReturnType<z.ZodType['safeParseAsync']>>;
  try {
    parsed = await withinMs(schema.safeParseAsync(args), timeoutMs, ZOD_TIMED_OUT);
  } catch (error) {
    if (error === ZOD_TIMED_OUT) return { ok: false, code: 'TOOL_ERROR', message: `its zod parameters did not finish parsing the arguments within ${timeoutMs} ms` };
    // A transform or refinement that threw.
    return { ok: false, code: 'TOOL_ERROR', message: `its zod parameters failed while parsing the arguments (${messageOf(error)})` };
  }
  if (!parsed.success) return { ok: false, code: 'INVALID_ARGS', message: `invalid arguments: ${listProblems(parsed.error.issues, describeIssue)}` };
  let value: JsonValue;
  try {
    // What the body receives is what the policy reads: plain, frozen JSON.
    value = snapshotJson(parsed.data, { label: 'arguments', maxDepth });
  } catch (error) {
    const reason = AirlockError.isInstance(error) ? error.message : messageOf(error);
    return { ok: false, code: 'TOOL_ERROR', message: `its zod parameters turned the arguments into something that is not JSON (${reason}); a permission rule could not read it, so transforms must return JSON` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, code: 'TOOL_ERROR', message: 'its zod parameters turned the arguments into something that is not an object; transforms of the whole arguments must return one' };
  // A transform can make keys of the model's text (a JSON string field parsed): the same
  // refusal as for the raw arguments, or a tool copying them would take one as a prototype.
  const bad = freezeParsedJson(value);
  if (bad !== undefined && 'prototypeKey' in bad) return { ok: false, code: 'INVALID_ARGS', message: `${bad.path === '(the root)' ? 'the arguments hold' : `${bad.path} holds`}, once parsed by the tool's schema, a key named "__proto__", which no tool takes; leave it out` };
  return { ok: true, value: value as JsonObject };
}

/** What a zod-authored output schema says is wrong with `value` (refinements its JSON Schema cannot hold), or undefined when it passes. */
export async function zodOutputProblems(schema: z.ZodType, value: JsonValue, timeoutMs: number): Promise<string | undefined> {
  try {
    const parsed = await withinMs(schema.safeParseAsync(value), timeoutMs, ZOD_TIMED_OUT);
    return parsed.success ? undefined : listProblems(parsed.error.issues, describeIssue);
  } catch (error) {
    if (error === ZOD_TIMED_OUT) return `its zod output schema did not finish checking the result within ${timeoutMs} ms`;
    return `its zod output schema failed while checking the result (${messageOf(error)})`;
  }
}

/** Compared by identity: what a zod parse that ran out of time is rejected with. */
const ZOD_TIMED_OUT: unique symbol = Symbol('zod parse timed out');

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.length === 0 ? '' : `/${issue.path.map(String).join('/')}: `}${issue.message}`;
}
