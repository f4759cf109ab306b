// Each provider format checked against the provider's own published types (compiled by
// `tsc -p test` in the test command) and, for MCP, the SDK's runtime schemas.
import type Anthropic from '@anthropic-ai/sdk';
import type { Content, FunctionDeclaration } from '@google/genai';
import { CallToolRequestParamsSchema, CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { anthropicMessages, defineTool, gemini, mcp, mcpCallToolResult, mcpToolsWithOutput, openaiChat, openaiResponses, schemaOf, type ToolResult } from '@airlock/core';

const tool = defineTool({
  name: 'read_note',
  description: 'Read a note.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  output: { type: 'object', properties: { text: { type: 'string' } } },
  deferLoading: true,
  execute: () => ({ text: 'hi' }),
});
const schemas = [schemaOf(tool)];
const results: ToolResult[] = [
  { callId: 'c1', name: 'read_note', content: '{"text":"hi"}', durationMs: 1, isError: false, value: { text: 'hi' } },
  { callId: 'c2', name: 'read_note', content: 'Error [TIMEOUT]: slow', durationMs: 1, isError: true, error: { code: 'TIMEOUT', message: 'slow' } },
];

describe('OpenAI Chat Completions (openai package types)', () => {
  it('tools and tool messages are the SDK\'s types; its assistant message parses', () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = openaiChat.tools(schemas);
    const messages: OpenAI.Chat.Completions.ChatCompletionToolMessageParam[] = openaiChat.toolMessages(results);
    const assistant: OpenAI.Chat.Completions.ChatCompletionMessage = {
      role: 'assistant', content: null, refusal: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_note', arguments: '{"id":"a"}' } }],
    };
    expect(openaiChat.parseCalls(assistant)).toEqual([{ id: 'c1', name: 'read_note', arguments: '{"id":"a"}' }]);
    expect(tools[0]!.type).toBe('function');
    expect(messages).toHaveLength(2);
  });
});

describe('OpenAI Responses (openai package types)', () => {
  it('function tools and function_call_output items are the SDK\'s types', () => {
    const tools: OpenAI.Responses.FunctionTool[] = openaiResponses.tools(schemas);
    const outputs: OpenAI.Responses.ResponseInputItem.FunctionCallOutput[] = openaiResponses.toolMessages(results);
    const call: OpenAI.Responses.ResponseFunctionToolCall = { type: 'function_call', call_id: 'c1', name: 'read_note', arguments: '{}' };
    expect(openaiResponses.parseCalls([call])).toEqual([{ id: 'c1', name: 'read_note', arguments: '{}' }]);
    expect(tools[0]!.strict).toBe(false);
    expect(outputs[1]!.output).toContain('TIMEOUT');
  });
});

describe('Anthropic Messages (@anthropic-ai/sdk types)', () => {
  it('tools (with defer_loading) and the tool_result message are the SDK\'s types', () => {
    const tools: Anthropic.Messages.Tool[] = anthropicMessages.tools(schemas);
    const messages: Anthropic.Messages.MessageParam[] = anthropicMessages.toolMessages(results);
    const assistant: Anthropic.Messages.MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_note', input: { id: 'a' } }] };
    expect(anthropicMessages.parseCalls(assistant)).toEqual([{ id: 'toolu_1', name: 'read_note', arguments: { id: 'a' } }]);
    expect(tools[0]!.defer_loading).toBe(true);
    expect(messages[0]!.content).toHaveLength(2);
  });
});

describe('Gemini (@google/genai types)', () => {
  it('function declarations and functionResponse contents are the SDK\'s types', () => {
    const declarations: FunctionDeclaration[] = gemini.tools(schemas);
    const contents: Content[] = gemini.toolMessages(results);
    const model: Content = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read_note', args: { id: 'a' } } }] };
    expect(gemini.parseCalls(model)).toEqual([{ id: 'c1', name: 'read_note', arguments: { id: 'a' } }]);
    expect(declarations[0]!.parametersJsonSchema).toMatchObject({ type: 'object' });
    expect(contents[0]!.parts).toHaveLength(2);
  });
});

describe('MCP (@modelcontextprotocol/sdk schemas, at run time)', () => {
  it('tools/list entries and CallToolResults pass the SDK\'s own schemas', () => {
    expect(() => ListToolsResultSchema.parse({ tools: mcp.tools(schemas) })).not.toThrow();
    expect(() => ListToolsResultSchema.parse({ tools: mcpToolsWithOutput([{ schema: schemas[0]!, output: tool.output }]) })).not.toThrow();
    for (const reply of mcp.toolMessages(results)) expect(() => CallToolResultSchema.parse(reply)).not.toThrow();
    expect(() => CallToolResultSchema.parse(mcpCallToolResult(results[0]!, tool.output))).not.toThrow();
    const params = CallToolRequestParamsSchema.parse({ name: 'read_note', arguments: { id: 'a' } });
    expect(mcp.parseCalls(params)[0]).toMatchObject({ name: 'read_note', arguments: { id: 'a' } });
  });
});
