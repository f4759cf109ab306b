// Stage 5: the value must be JSON, within the size limit and valid against `output`;
// then projectContent turns it into the text the model reads.
import { containRejection } from '../util/contain-rejection.js';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';
import { snapshotJson } from '../json/snapshot-json.js';
import { draftFailure, type DraftResult } from '../result/tool-result.js';
import { toolErrorMessage } from '../result/thrown-failure.js';
import { describeValidationErrors } from '../validation/describe-errors.js';
import { zodOutputProblems } from '../validation/zod-arguments.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineLimits } from './pipeline-limits.js';

export function postProcess(call: ParsedCall, args: JsonObject, raw: unknown, limits: PipelineLimits): DraftResult | Promise<DraftResult> {
  const { definition, validateOutput, zodOutput } = call.tool!;
  // A tool's own limit (a plugin manifest's, through the sandbox) wins over the engine's.
  const maxOutputBytes = definition.maxOutputBytes ?? limits.maxOutputBytes;
  let value: JsonValue;
  try {
    value = snapshotJson(raw === undefined ? null : raw, { label: 'the returned value' });
  } catch (error) {
    if (!AirlockError.isInstance(error)) throw error;
    return draftFailure('INVALID_TOOL_OUTPUT', `${call.name}: ${error.message}`);
  }
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text, 'utf8') > maxOutputBytes) {
    return draftFailure('OUTPUT_TOO_LARGE', `${call.name}: the result is larger than ${maxOutputBytes} bytes`, `${call.name}: the result is larger than this tool may return`);
  }
  if (validateOutput !== undefined && !validateOutput(value, text.length)) {
    // The output schema is host-only: the model hears that the result was refused, not the schema's names, patterns or enums.
    return draftFailure('INVALID_TOOL_OUTPUT', `${call.name}: the result does not match the declared output schema: ${describeValidationErrors(validateOutput.errors)}`, `${call.name}: the tool's result does not match what it declares`);
  }
  if (zodOutput === undefined) return project(call, args, value, text, maxOutputBytes);
  // Checked with zod's asynchronous parse: a refinement may answer with a promise (its synchronous
  // parse would drop it, and its rejection would end the host process).
  return zodOutputProblems(zodOutput, value, limits.guardTimeoutMs).then((refused) =>
    refused === undefined ? project(call, args, value, text, maxOutputBytes) : draftFailure('INVALID_TOOL_OUTPUT', `${call.name}: the result does not match the declared output schema: ${refused}`, `${call.name}: the tool's result does not match what it declares`),
  );
}

/** projectContent turns the checked value into the text the model reads (default: its JSON). */
function project(call: ParsedCall, args: JsonObject, value: JsonValue, text: string, maxOutputBytes: number): DraftResult {
  const definition = call.tool!.definition;
  let content: unknown = text;
  if (definition.projectContent !== undefined) {
    try {
      content = definition.projectContent(args, value);
      containRejection(content); // an async one answers a promise: refused below, its rejection handled
    } catch (error) {
      return draftFailure('TOOL_ERROR', toolErrorMessage(`${call.name}: projectContent failed`, error));
    }
    if (typeof content !== 'string') return draftFailure('TOOL_ERROR', `${call.name}: projectContent must return a string`);
    if (Buffer.byteLength(content, 'utf8') > maxOutputBytes) {
      return draftFailure('OUTPUT_TOO_LARGE', `${call.name}: the content is larger than ${maxOutputBytes} bytes`, `${call.name}: the content is larger than this tool may return`);
    }
  }
  return { isError: false, value, content: content as string };
}
