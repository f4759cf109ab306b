// The only path from a tool definition to anything a model sees. It names the four
// model-facing fields it copies; nothing else can leak, whatever the definition holds.
import { cloneJson } from '../json/clone-json.js';
import type { JsonSchema } from '../json/json-types.js';
import type { AnyTool } from './tool-definition.js';

export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly deferLoading?: boolean;
}

export function schemaOf(tool: Pick<AnyTool, 'name' | 'description' | 'parameters' | 'deferLoading'>): ToolSchema {
  const schema: { name: string; description: string; parameters: JsonSchema; deferLoading?: boolean } = {
    name: tool.name,
    description: tool.description,
    parameters: cloneJson(tool.parameters),
  };
  if (tool.deferLoading === true) schema.deferLoading = true;
  return schema;
}
