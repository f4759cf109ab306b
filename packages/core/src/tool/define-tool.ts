// defineTool: author a tool with zod or JSON Schema; execute's args are typed from it.
import type { z } from 'zod';
import { AirlockError } from '../errors/airlock-error.js';
import { MAX_TIMER_MS } from '../util/max-timer.js';
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import type { AnyTool, HostOnlyFields, ToolDefinition } from './tool-definition.js';
import { MODEL_FACING_FIELDS, HOST_ONLY_FIELDS } from './tool-definition.js';
import { isZodSchema, toJsonSchema } from './to-json-schema.js';

type ArgsOf<P> = P extends z.ZodType ? z.output<P> : JsonObject;
type ValueOf<O> = O extends z.ZodType ? z.output<O> & JsonValue : JsonValue;

export interface ToolInput<P, O> extends Omit<HostOnlyFields<ArgsOf<P>, ValueOf<O>>, 'output'> {
  readonly name: string;
  readonly description: string;
  readonly parameters: P;
  readonly deferLoading?: boolean;
  readonly output?: O;
}

/**
 * Tool names every provider accepts: OpenAI's and Anthropic's common subset (letters, digits,
 * "_" and "-", at most 64), starting with a letter or "_" as Gemini's function declarations must.
 */
export const TOOL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MODEL_FACING_FIELDS, ...HOST_ONLY_FIELDS]);

function fail(toolName: string, field: string, message: string): never {
  throw new AirlockError('INVALID_TOOL_DEFINITION', `tool "${toolName}" ${field} ${message}`, { tool: toolName, field });
}

/**
 * Checks a definition and returns it in registry form: schemas converted and
 * snapshotted, functions checked. Throws AirlockError naming the tool and field.
 */
export function defineTool<P extends z.ZodType | JsonSchema, O extends z.ZodType | JsonSchema | undefined = undefined>(
  input: ToolInput<P, O>,
): AnyTool {
  if (typeof input !== 'object' || input === null) {
    throw new AirlockError('INVALID_TOOL_DEFINITION', 'a tool definition must be an object');
  }
  const name: unknown = input.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    fail(String(name), 'name', 'must be 1-64 characters of letters, digits, "_" or "-", starting with a letter or "_"');
  }
  for (const key of Object.keys(input)) {
    if (!KNOWN_FIELDS.has(key)) fail(name, key, 'is not one of the thirteen tool fields');
  }
  // Read once: an accessor could answer the check with a string and the definition with something else.
  const description: unknown = input.description;
  if (typeof description !== 'string' || description.trim() === '') fail(name, 'description', 'must be a non-empty string');
  if (input.deferLoading !== undefined && typeof input.deferLoading !== 'boolean') fail(name, 'deferLoading', 'must be a boolean');
  if (typeof input.execute !== 'function') fail(name, 'execute', 'must be a function');
  for (const field of ['projectContent', 'finalizeContent', 'isConcurrencySafe', 'presentCall', 'presentResult'] as const) {
    if (input[field] !== undefined && typeof input[field] !== 'function') fail(name, field, 'must be a function');
  }
  if (input.timeoutMs !== undefined && !(typeof input.timeoutMs === 'number' && Number.isFinite(input.timeoutMs) && input.timeoutMs > 0)) {
    fail(name, 'timeoutMs', 'must be a positive finite number of milliseconds');
  }
  // Node fires a longer timer at once: every call would end TIMEOUT before its body ran.
  if (input.timeoutMs !== undefined && input.timeoutMs > MAX_TIMER_MS) fail(name, 'timeoutMs', `must be at most ${MAX_TIMER_MS} milliseconds (about 24.8 days)`);
  if (input.maxOutputBytes !== undefined && !(Number.isInteger(input.maxOutputBytes) && input.maxOutputBytes > 0)) {
    fail(name, 'maxOutputBytes', 'must be a positive whole number of bytes');
  }

  const parameters = toJsonSchema(input.parameters, name, 'parameters');
  if (parameters.type !== 'object') fail(name, 'parameters', 'must be an object-rooted JSON Schema ("type": "object")');
  const output = input.output === undefined ? undefined : toJsonSchema(input.output, name, 'output');

  // Zod schemas also parse (defaults, transforms, refinements), in the pipeline's parse stage
  // (validation/zod-arguments.ts), so execute receives z.output and the policy reads the same.
  const zodParameters = isZodSchema(input.parameters) ? input.parameters : AUTHORED_ZOD.get(input.parameters as object);
  // A zod output's refinements are checked too (post-process.ts): its JSON Schema cannot say them.
  const zodOutput = isZodSchema(input.output) ? input.output : typeof input.output === 'object' && input.output !== null ? AUTHORED_ZOD.get(input.output) : undefined;
  const execute = input.execute as unknown as AnyTool['execute'];

  const tool: ToolDefinition<JsonObject, JsonValue> = {
    name,
    description,
    parameters,
    ...(input.deferLoading === undefined ? {} : { deferLoading: input.deferLoading }),
    ...(output === undefined ? {} : { output }),
    execute,
    ...pickFunctions(input),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
    ...(input.maxOutputBytes === undefined ? {} : { maxOutputBytes: input.maxOutputBytes }),
  };
  Object.freeze(tool);
  if (zodParameters !== undefined) AUTHORED_ZOD.set(parameters, zodParameters);
  if (zodOutput !== undefined && output !== undefined) AUTHORED_ZOD.set(output, zodOutput);
  return tool;
}

/**
 * The zod schema behind each JSON Schema a zod-authored tool's parameters became. Keyed by
 * that schema object, not the tool: a tool spread into a new definition (`{ ...tool,
 * timeoutMs }`, as wrappers do) carries the same parameters, so its refinements and defaults
 * still apply; defined again (as registering does), the new snapshot is keyed too.
 */
const AUTHORED_ZOD = new WeakMap<object, z.ZodType>();

/** The zod schema a tool's parameters were authored with, if any: the parse stage parses its arguments with it. */
export function zodParametersOf(tool: AnyTool): z.ZodType | undefined {
  return typeof tool.parameters === 'object' && tool.parameters !== null ? AUTHORED_ZOD.get(tool.parameters) : undefined;
}

/** The zod schema a tool's output was authored with, if any: post-processing checks the value against it too. */
export function zodOutputOf(tool: AnyTool): z.ZodType | undefined {
  return typeof tool.output === 'object' && tool.output !== null ? AUTHORED_ZOD.get(tool.output) : undefined;
}

function pickFunctions(input: object): Partial<AnyTool> {
  const picked: Record<string, unknown> = {};
  for (const field of ['projectContent', 'finalizeContent', 'isConcurrencySafe', 'presentCall', 'presentResult'] as const) {
    const value = (input as Record<string, unknown>)[field];
    if (value !== undefined) picked[field] = value;
  }
  return picked as Partial<AnyTool>;
}
