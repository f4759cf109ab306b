// engine.tools(provider) and engine.runMessage(provider, ...) return that provider's own
// types: checked against the SDKs' published types by `tsc -p test` in the test command.
import type Anthropic from '@anthropic-ai/sdk';
import type { Content, FunctionDeclaration } from '@google/genai';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createEngine, defineTool } from '@airlock/core';

const engine = createEngine({
  tools: [defineTool({
    name: 'read_note',
    description: 'Read a note.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    execute: ({ id }) => ({ text: `note ${String(id)}` }),
  })],
  policy: { default: 'allow' },
});

describe('engine.tools and engine.runMessage carry each provider\'s types', () => {
  it('tool lists are the SDKs\' tool types, not unknown[]', () => {
    const anthropic: Anthropic.Messages.Tool[] = engine.tools('anthropic');
    const openai: OpenAI.Chat.Completions.ChatCompletionTool[] = engine.tools('openai');
    const responses: OpenAI.Responses.FunctionTool[] = engine.tools('responses');
    const gemini: FunctionDeclaration[] = engine.tools('gemini');
    // @ts-expect-error Gemini declarations are not Anthropic tools: the overload is per provider.
    const wrong: Anthropic.Messages.Tool[] = engine.tools('gemini');
    expect([anthropic, openai, responses, gemini, wrong].map((list) => list.length)).toEqual([1, 1, 1, 1, 1]);
    expect(engine.tools('mcp')[0]!.inputSchema.type).toBe('object');
  });

  it('tool messages are the SDKs\' message types', async () => {
    const assistant: Anthropic.Messages.MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_note', input: { id: 'a' } }] };
    const anthropic: Anthropic.Messages.MessageParam[] = (await engine.runMessage('anthropic', assistant)).messages;
    const model: Content = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read_note', args: { id: 'a' } } }] };
    const gemini: Content[] = (await engine.runMessage('gemini', model)).messages;
    const call: OpenAI.Chat.Completions.ChatCompletionMessage = {
      role: 'assistant', content: null, refusal: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_note', arguments: '{"id":"a"}' } }],
    };
    const openai: OpenAI.Chat.Completions.ChatCompletionToolMessageParam[] = (await engine.runMessage('openai', call)).messages;
    expect([anthropic.length, gemini.length, openai.length]).toEqual([1, 1, 1]);
    expect(openai[0]!.content).toContain('note a');
  });
});
