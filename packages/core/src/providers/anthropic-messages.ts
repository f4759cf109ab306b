// Anthropic Messages: `input_schema` tools, `tool_use` blocks, one user message of `tool_result` blocks.
import type { JsonSchema } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { callField, invalidMessage, isRecord, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema & { type: 'object' };
  defer_loading?: boolean;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export interface AnthropicToolResultMessage {
  role: 'user';
  content: AnthropicToolResultBlock[];
}

export const anthropicMessages: ProviderFormat<AnthropicTool, AnthropicToolResultMessage> = {
  id: 'anthropic',
  tools: (schemas: readonly ToolSchema[]) =>
    schemas.map((schema) => {
      const tool: AnthropicTool = { name: schema.name, description: schema.description, input_schema: schema.parameters as AnthropicTool['input_schema'] };
      if (schema.deferLoading === true) tool.defer_loading = true;
      return tool;
    }),
  parseCalls(message: unknown): ToolCallRequest[] {
    const content = isRecord(message) ? message.content : undefined;
    if (!Array.isArray(content)) throw invalidMessage('anthropic', 'expected an assistant message with a "content" array');
    return content
      .filter((block): block is Record<string, unknown> => isRecord(block) && block.type === 'tool_use')
      .map((block) => ({ id: callField(block.id), name: callField(block.name), arguments: block.input as ToolCallRequest['arguments'] }));
  },
  toolMessages: (results: readonly ToolResult[]) =>
    results.length === 0
      ? []
      : [{
          role: 'user',
          content: results.map((result) => {
            const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: result.callId, content: result.content };
            if (result.isError) block.is_error = true;
            return block;
          }),
        }],
};
