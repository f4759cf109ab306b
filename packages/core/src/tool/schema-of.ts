// The only path from a tool definition to anything a model sees. It names the four
// model-facing fields it copies; nothing else can leak, whatever the definition holds.
import { AirlockError } from '../errors/airlock-error.js';
import { cloneJson } from '../json/clone-json.js';
import { snapshotJson } from '../json/snapshot-json.js';
import { isSnapshottedSchema } from './to-json-schema.js';
import type { JsonSchema } from '../json/json-types.js';
import type { AnyTool } from './tool-definition.js';

export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly deferLoading?: boolean;
}

/**
 * The model-facing schema of a tool. A definition that was never registered or defined (its
 * parameters not yet snapshotted) is checked here as registering would check it: parameters
 * that are not lossless JSON throw NOT_LOSSLESS_JSON naming the tool, a name or description
 * that is not a string INVALID_TOOL_DEFINITION.
 */
export function schemaOf(tool: Pick<AnyTool, 'name' | 'description' | 'parameters' | 'deferLoading'>): ToolSchema {
  // Each field read once: a getter could answer a check with one value and the copy with another.
  const name: unknown = tool.name;
  const description: unknown = tool.description;
  const parameters: unknown = tool.parameters;
  if (typeof name !== 'string') throw new AirlockError('INVALID_TOOL_DEFINITION', 'schemaOf: the tool\'s name must be a string', { field: 'name' });
  if (typeof description !== 'string') throw new AirlockError('INVALID_TOOL_DEFINITION', `tool "${name}" description must be a string`, { tool: name, field: 'description' });
  const schema: { name: string; description: string; parameters: JsonSchema; deferLoading?: boolean } = {
    name,
    description,
    parameters: cloneJson(isSnapshottedSchema(parameters) ? (parameters as JsonSchema) : (snapshotJson(parameters, { label: `tool "${name}" parameters` }) as JsonSchema)),
  };
  if (tool.deferLoading === true) schema.deferLoading = true;
  return schema;
}
