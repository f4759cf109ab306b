// OpenAI Responses: flat function tools, `function_call` output items, `function_call_output` replies.
// A list of items is a conversation: only its calls without an output yet are run.
import type { JsonSchema } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { callField, invalidMessage, isRecord, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

export interface OpenAIResponsesToolOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/** Accepts a response (`{ output: [...] }`), an array of items, or one item. */
function itemsOf(message: unknown): unknown[] {
  if (Array.isArray(message)) return message;
  if (isRecord(message) && Array.isArray(message.output)) return message.output;
  if (isRecord(message) && message.type === 'function_call') return [message];
  throw invalidMessage('responses', 'expected a response with "output" items or an array of items');
}

/**
 * The `function_call` items no `function_call_output` answers yet. An accumulated input list
 * holds earlier turns too: a call answered by an output after it is not run again (a charge
 * made twice). Only a later output answers a call: a server may number ids per response and
 * reuse one.
 */
export function unansweredCalls(items: readonly unknown[]): Record<string, unknown>[] {
  const lastOutput = new Map<string, number>();
  items.forEach((item, index) => {
    if (isRecord(item) && item.type === 'function_call_output' && typeof item.call_id === 'string') lastOutput.set(item.call_id, index);
  });
  const waiting = (item: Record<string, unknown>, index: number): boolean => typeof item.call_id !== 'string' || (lastOutput.get(item.call_id) ?? -1) < index;
  return items.flatMap((item, index) => (isRecord(item) && item.type === 'function_call' && waiting(item, index) ? [item] : []));
}

export const openaiResponses: ProviderFormat<OpenAIResponsesTool, OpenAIResponsesToolOutput> = {
  id: 'responses',
  tools: (schemas: readonly ToolSchema[]) =>
    // strict mode would rewrite the schema's meaning (all fields required), so it stays off.
    schemas.map((schema) => ({ type: 'function', name: schema.name, description: schema.description, parameters: schema.parameters, strict: false })),
  parseCalls(message: unknown): ToolCallRequest[] {
    return unansweredCalls(itemsOf(message))
      .map((item) => ({ id: callField(item.call_id), name: callField(item.name), arguments: item.arguments as ToolCallRequest['arguments'] }));
  },
  toolMessages: (results: readonly ToolResult[]) =>
    results.map((result) => ({ type: 'function_call_output', call_id: result.callId, output: result.content })),
};
