// A zod-authored tool's arguments as its body will receive them: zod's own parse (defaults,
// transforms, refinements) runs in the parse stage, after the JSON Schema check, so the
// permission rules, guards and approver decide on the very arguments the body gets. Run
// inside execute, a `.trim()` or `.default('/etc/shadow')` turned arguments a deny rule had
// passed into ones it would have refused.
import type { z } from 'zod';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonObject } from '../json/json-types.js';
import { snapshotJson } from '../json/snapshot-json.js';
import { messageOf } from '../util/sanitize-message.js';
import { listProblems } from './describe-errors.js';

export type ZodArgumentsOutcome =
  | { readonly ok: true; readonly value: JsonObject }
  | { readonly ok: false; readonly code: 'INVALID_ARGS' | 'TOOL_ERROR'; readonly message: string };

/** Parses `args` (already checked against the tool's JSON Schema) with the tool's zod schema; never throws. */
export function parseZodArguments(schema: z.ZodType, args: JsonObject, maxDepth: number): ZodArgumentsOutcome {
  let parsed: ReturnType<z.ZodType['safeParse']>;
  try {
    parsed = schema.safeParse(args);
  } catch (error) {
    // A transform that threw, or an asynchronous refinement (zod refuses those in a synchronous parse).
    return { ok: false, code: 'TOOL_ERROR', message: `its zod parameters failed while parsing the arguments (${messageOf(error)})` };
  }
  if (!parsed.success) return { ok: false, code: 'INVALID_ARGS', message: `invalid arguments: ${listProblems(parsed.error.issues, describeIssue)}` };
  try {
    // What the body receives is what the policy reads: plain, frozen JSON.
    return { ok: true, value: snapshotJson(parsed.data, { label: 'arguments', maxDepth }) as JsonObject };
  } catch (error) {
    const reason = AirlockError.isInstance(error) ? error.message : messageOf(error);
    return { ok: false, code: 'TOOL_ERROR', message: `its zod parameters turned the arguments into something that is not JSON (${reason}); a permission rule could not read it, so transforms must return JSON` };
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.length === 0 ? '' : `/${issue.path.map(String).join('/')}: `}${issue.message}`;
}
