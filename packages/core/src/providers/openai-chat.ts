// OpenAI Chat Completions: `tools[].function`, `message.tool_calls`, `role: "tool"` replies.
import type { JsonSchema } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { invalidMessage, isRecord, requireId, requireString, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

export interface OpenAIChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export const openaiChat: ProviderFormat<OpenAIChatTool, OpenAIChatToolMessage> = {
  id: 'openai',
  tools: (schemas: readonly ToolSchema[]) =>
    schemas.map((schema) => ({
      type: 'function',
      function: { name: schema.name, description: schema.description, parameters: schema.parameters },
    })),
  parseCalls(message: unknown): ToolCallRequest[] {
    if (!isRecord(message) || !Array.isArray(message.tool_calls)) throw invalidMessage('openai', 'expected an assistant message with "tool_calls"');
    return message.tool_calls.map((call: unknown, index) => {
      if (!isRecord(call) || !isRecord(call.function)) throw invalidMessage('openai', `tool_calls[${index}] must have a "function" object`);
      const args = call.function.arguments;
      return {
        id: requireId(call.id, 'openai', `tool_calls[${index}].id`),
        name: requireString(call.function.name, 'openai', `tool_calls[${index}].function.name`),
        arguments: args as ToolCallRequest['arguments'],
      };
    });
  },
  toolMessages: (results: readonly ToolResult[]) =>
    results.map((result) => ({ role: 'tool', tool_call_id: result.callId, content: result.content })),
};
