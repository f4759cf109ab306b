// OpenAI Chat Completions: `tools[].function`, `message.tool_calls`, `role: "tool"` replies.
import type { JsonSchema } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { callField, invalidMessage, isRecord, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

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
    // Array.from visits holes too: each entry is a call, answered even when it is malformed.
    return Array.from(message.tool_calls as unknown[], (call) => {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
      return { id: callField(isRecord(call) ? call.id : undefined), name: callField(fn?.name), arguments: fn?.arguments as ToolCallRequest['arguments'] };
    });
  },
  toolMessages: (results: readonly ToolResult[]) =>
    results.map((result) => ({ role: 'tool', tool_call_id: result.callId, content: result.content })),
};
