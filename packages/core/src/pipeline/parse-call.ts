// Stage 1: provider call to frozen arguments, or a failure result. Never throws.
// Hot path: objects are built as literals (spreads hit a slow V8 path here).
import { NEVER_ABORTED } from '../util/merge-abort-signals.js';
import { shortened } from '../util/shortened.js';
import { ABORTED, untilAborted } from '../util/until-aborted.js';
import { parseJsonArguments } from '../json/parse-json-arguments.js';
import type { JsonObject } from '../json/json-types.js';
import type { ToolCallRequest } from '../providers/provider-format.js';
import type { RegisteredTool, ToolRegistry } from '../registry/tool-registry.js';
import { describeValidationErrors } from '../validation/describe-errors.js';
import { parseZodArguments } from '../validation/zod-arguments.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineLimits } from './pipeline-limits.js';

/**
 * `standIn` names a call that has no id of its own (never one another call of the turn uses);
 * `listable` says which tools an unknown-tool answer may name (none the tenant is denied outright).
 */
export function parseCall(registry: ToolRegistry, request: ToolCallRequest, index: number, limits: PipelineLimits, standIn: (index: number) => string, listable: (name: string) => boolean = () => true, cancelled = false, signal: AbortSignal = NEVER_ABORTED): ParsedCall | Promise<ParsedCall> {
  const id = request.id;
  const name = String(request.name);
  // The model's text, echoed in messages only this long: a name of megabytes would fill its context.
  const shown = shortened(name, MAX_SHOWN_NAME);
  // A call without an id cannot be matched to its result: answered under its position, never run.
  if (id === undefined || id === null || id === '') return failed(index, standIn(index), name, registry.get(name), 'INVALID_ARGS', `${shown}: the call has no id (tool call ids are non-empty strings)`);
  const callId = String(id);
  if (typeof request.name !== 'string') return failed(index, callId, name, undefined, 'INVALID_ARGS', 'the call names no tool (a tool call\'s name is a string)');
  const tool = registry.get(name);
  if (tool === undefined) return failed(index, callId, name, tool, 'UNKNOWN_TOOL', unknownToolMessage(registry, shown, listable));
  // Cancelled before its arguments were read: they are not (validating them is the costly part).
  if (cancelled) return failed(index, callId, name, tool, 'ABORTED_BEFORE_DISPATCH', `${name}: cancelled before it started`);
  const parsed = parseJsonArguments(request.arguments, limits);
  if (!parsed.ok) return failed(index, callId, name, tool, 'INVALID_ARGS', `${name}: ${parsed.message}`);
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return failed(index, callId, name, tool, 'INVALID_ARGS', `${name}: arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  if (!tool.validateArgs(value, parsed.jsonLength)) return failed(index, callId, name, tool, 'INVALID_ARGS', invalidArgsMessage(tool, name));
  if (tool.zodParameters === undefined) return { index, callId, name, tool, args: value as JsonObject, failure: undefined };
  // A zod refinement may take its time: a turn cancelled meanwhile answers the call at once.
  return untilAborted(parseZodArguments(tool.zodParameters, value as JsonObject, limits.maxArgumentDepth, limits.guardTimeoutMs), signal).then((prepared) => {
    if (prepared === ABORTED) return failed(index, callId, name, tool, 'ABORTED_BEFORE_DISPATCH', `${name}: cancelled before it started`);
    return prepared.ok ? { index, callId, name, tool, args: prepared.value, failure: undefined } : failed(index, callId, name, tool, prepared.code, `${name}: ${prepared.message}`);
  });
}

const MAX_SHOWN_NAME = 128;

function failed(index: number, callId: string, name: string, tool: RegisteredTool | undefined, code: NonNullable<ParsedCall['failure']>['code'], message: string): ParsedCall {
  return { index, callId, name, tool, args: undefined, failure: { code, message } };
}

/** Tools an unknown-tool answer names at most. */
const LISTED_TOOLS = 20;

function unknownToolMessage(registry: ToolRegistry, name: string, listable: (name: string) => boolean): string {
  // Only tools this tenant may call at all: the list must not tell a model of an admin tool the policy denies it.
  // At most LISTED_TOOLS are named, so the policy is asked only until one more is found.
  const known: string[] = [];
  for (const candidate of registry.names()) {
    if (listable(candidate)) known.push(candidate);
    if (known.length > LISTED_TOOLS) break;
  }
  const hint = known.length > 0 ? ` Available tools: ${known.slice(0, LISTED_TOOLS).join(', ')}${known.length > LISTED_TOOLS ? ', …' : ''}.` : '';
  return `no tool named "${name}".${hint}`;
}

function invalidArgsMessage(tool: RegisteredTool, name: string): string {
  return `${name}: invalid arguments: ${describeValidationErrors(tool.validateArgs.errors)}`;
}
