// Every input shape DESIGN.md section 5 documents for `airlock run`, as users save them
// from each provider, and the one-line refusals for everything else.
import { describe, expect, it } from 'vitest';
import { AirlockError, createEngine, defineTool, detectToolCallMessage, PROVIDERS } from '../src/index.js';

const chatAssistant = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_note', arguments: '{"id":"a"}' } }] };
const anthropicAssistant = { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_1', name: 'read_note', input: { id: 'a' } }] };
const geminiModel = { role: 'model', parts: [{ functionCall: { id: 'g1', name: 'read_note', args: { id: 'a' } } }] };
const call = (id: string) => ({ type: 'function_call', call_id: id, name: 'read_note', arguments: '{"id":"a"}' });

/** The ids of the calls that would run, through the detected provider's own parser. */
function callIds(input: unknown): { provider: string; ids: string[] } {
  const detected = detectToolCallMessage(input);
  return { provider: detected.provider, ids: PROVIDERS[detected.provider].parseCalls(detected.message).map((c) => c.id) };
}

function refusal(input: unknown): string {
  try {
    detectToolCallMessage(input);
  } catch (error) {
    expect(AirlockError.isInstance(error) && error.code === 'INVALID_PROVIDER_MESSAGE').toBe(true);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a refusal');
}

describe('detectToolCallMessage: accepted inputs', () => {
  it.each([
    ['one Chat Completions message', chatAssistant, 'openai', ['c1']],
    ['one Anthropic message', anthropicAssistant, 'anthropic', ['toolu_1']],
    ['one Gemini content', geminiModel, 'gemini', ['g1']],
    ['an array of messages (last assistant runs)', [{ role: 'user', content: 'hi' }, { ...chatAssistant, tool_calls: [{ ...chatAssistant.tool_calls[0], id: 'old' }] }, { role: 'tool', tool_call_id: 'old', content: 'x' }, chatAssistant], 'openai', ['c1']],
    ['{ "messages": [...] }', { messages: [{ role: 'user', content: 'hi' }, anthropicAssistant] }, 'anthropic', ['toolu_1']],
    ['Gemini contents as an array', [{ role: 'user', parts: [{ text: 'hi' }] }, geminiModel], 'gemini', ['g1']],
    ['a Gemini request body, { "contents": [...] }', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }, geminiModel], tools: [] }, 'gemini', ['g1']],
    ['a single Responses function_call item', call('r1'), 'responses', ['r1']],
    ['an array of Responses items', [{ type: 'reasoning', summary: [] }, call('r1'), call('r2')], 'responses', ['r1', 'r2']],
    ['a Responses conversation: only the last turn runs', [{ role: 'user', content: 'hi' }, call('old'), { type: 'function_call_output', call_id: 'old', output: 'x' }, { type: 'message', role: 'assistant', content: [] }, call('r1')], 'responses', ['r1']],
    ['a raw Chat Completions response', { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'tool_calls', message: chatAssistant }] }, 'openai', ['c1']],
    ['a raw Responses response', { id: 'resp_1', object: 'response', output: [{ type: 'message', role: 'assistant', content: [] }, call('r1')] }, 'responses', ['r1']],
    ['a raw Gemini response', { candidates: [{ content: geminiModel, finishReason: 'STOP' }] }, 'gemini', ['g1']],
    ['a raw Anthropic response', { id: 'msg_1', type: 'message', model: 'claude', stop_reason: 'tool_use', ...anthropicAssistant }, 'anthropic', ['toolu_1']],
  ])('%s', (_, input, provider, ids) => {
    expect(callIds(input)).toEqual({ provider, ids });
  });
});

describe('detectToolCallMessage: refusals say what is accepted', () => {
  it.each([
    ['a number', 42],
    ['null', null],
    ['an object of no known shape', { hello: 'world' }],
    ['an empty array', []],
    ['an array without an assistant message', [{ role: 'user', content: 'hi' }]],
  ])('%s', (_, input) => {
    const message = refusal(input);
    expect(message).toContain('accepted:');
    expect(message).toContain('"choices"');
  });

  it('an assistant reply without tool calls says so', () => {
    expect(refusal({ choices: [{ message: { role: 'assistant', content: 'Done.' } }] })).toBe('not a tool-call message: choices[0].message has no tool calls');
    expect(refusal([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Done.' }])).toBe('not a tool-call message: the last assistant message has no tool calls');
    expect(refusal({ role: 'assistant', content: 'Done.', tool_calls: [] })).toMatch(/has no tool calls/);
  });

  it('a Responses conversation whose calls all have outputs has nothing to run', () => {
    expect(refusal([call('r1'), { type: 'function_call_output', call_id: 'r1', output: 'x' }])).toContain('every "function_call" of the last turn of the array already has a "function_call_output": nothing is left to run');
    expect(refusal({ output: [{ type: 'reasoning', summary: [] }, call('r1'), { type: 'function_call_output', call_id: 'r1', output: 'x' }] })).toContain('nothing is left to run');
  });

  it.each([
    ['OpenAI', [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'write', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'a', content: 'done' }]],
    ['Anthropic', [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'write', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'done' }] }]],
    ['Gemini', [{ role: 'model', parts: [{ functionCall: { id: 'a', name: 'write', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { id: 'a', name: 'write', response: {} } }] }]],
  ])('a saved %s conversation whose last assistant turn is already answered has nothing to run (running it would repeat it)', (_provider, conversation) => {
    expect(refusal(conversation)).toContain('already has a tool reply after it: nothing is left to run');
  });

  it('a Gemini turn with replies after it and calls without ids is refused: which were answered cannot be told', () => {
    const conversation = [{ role: 'model', parts: [{ functionCall: { name: 'write', args: {} } }, { functionCall: { name: 'write', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 'write', response: {} } }] }];
    expect(refusal(conversation)).toContain('calls without an "id" cannot be told answered or not');
  });

  it('a lone message of the user\'s, or a tool reply, runs nothing: only an assistant message holds the model\'s calls', () => {
    const calls = [{ id: 'a', type: 'function', function: { name: 'write', arguments: '{}' } }];
    expect(refusal({ role: 'user', tool_calls: calls })).toBe('not a tool-call message: the message has role "user": only an assistant message (role "assistant" or "model") holds the model\'s calls');
    expect(refusal({ role: 'tool', tool_calls: calls })).toContain('has role "tool"');
    expect(refusal({ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'write', input: {} }] })).toContain('has role "user"');
    expect(callIds({ tool_calls: calls })).toEqual({ provider: 'openai', ids: ['a'] });
  });

  it('a raw response of several choices or candidates is refused: running the first would drop the others\' calls', () => {
    const choice = { message: { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'write', arguments: '{}' } }] } };
    expect(refusal({ choices: [choice, choice] })).toBe('not a tool-call message: the response has 2 choices: save the one to run (its "message")');
    const candidate = { content: { role: 'model', parts: [{ functionCall: { id: 'a', name: 'write', args: {} } }] } };
    expect(refusal({ candidates: [candidate, candidate] })).toContain('the response has 2 candidates');
  });

  it('a raw response with no choice or candidate content names the missing field', () => {
    expect(refusal({ choices: [] })).toContain('choices[0].message is missing');
    expect(refusal({ candidates: [{ finishReason: 'SAFETY' }] })).toContain('candidates[0].content is missing');
  });
});

describe('a partly answered last turn: only the calls without a reply run', () => {
  const chat = (id: string) => ({ id, type: 'function', function: { name: 'read_note', arguments: '{"id":"a"}' } });
  it.each([
    ['OpenAI', [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: [chat('a'), chat('b'), chat('c')] }, { role: 'tool', tool_call_id: 'b', content: 'done' }], 'openai', ['a', 'c']],
    ['Anthropic', [{ role: 'assistant', content: [{ type: 'text', text: 'Two.' }, { type: 'tool_use', id: 'a', name: 'read_note', input: {} }, { type: 'tool_use', id: 'b', name: 'read_note', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'done' }] }], 'anthropic', ['b']],
    ['Gemini (with ids)', [{ role: 'model', parts: [{ functionCall: { id: 'a', name: 'read_note', args: {} } }, { functionCall: { id: 'b', name: 'read_note', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { id: 'b', name: 'read_note', response: {} } }] }], 'gemini', ['a']],
    ['Responses', [{ role: 'user', content: 'go' }, call('a'), call('b'), { type: 'function_call_output', call_id: 'a', output: 'x' }], 'responses', ['b']],
    ['Responses, a later step of the same turn', [{ role: 'user', content: 'go' }, call('a'), { type: 'function_call_output', call_id: 'a', output: 'x' }, call('b')], 'responses', ['b']],
  ])('%s', (_provider, conversation, provider, ids) => {
    expect(callIds(conversation)).toEqual({ provider, ids });
  });
});

describe('a message in two formats at once is refused, not half run', () => {
  it('OpenAI tool_calls beside Anthropic tool_use blocks', () => {
    const message = { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'read_note', arguments: '{}' } }], content: [{ type: 'tool_use', id: 'b', name: 'delete_note', input: {} }] };
    expect(() => detectToolCallMessage(message)).toThrow('the message holds OpenAI "tool_calls" and Anthropic "tool_use" blocks: which calls to run is not clear');
  });

  it('Responses items beside chat messages, a raw response of two APIs, an item that is also a message', () => {
    const chat = { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'read_note', arguments: '{}' } }] };
    const item = { type: 'function_call', call_id: 'b', name: 'delete_note', arguments: '{}' };
    expect(() => detectToolCallMessage([item, chat])).toThrow(/mixes Responses "function_call" items with messages holding tool calls/);
    expect(() => detectToolCallMessage({ choices: [{ message: chat }], output: [item] })).toThrow(/the input is both "choices" and "output"/);
    expect(() => detectToolCallMessage({ ...item, ...chat })).toThrow(/the input is both a Responses "function_call" item and tool calls of its own/);
  });
});

describe('a malformed call is answered beside the well-formed ones, not a malformed message', () => {
  const good = { openai: { id: 'ok', type: 'function', function: { name: 'read_note', arguments: '{}' } }, anthropic: { type: 'tool_use', id: 'ok', name: 'read_note', input: {} }, responses: { type: 'function_call', call_id: 'ok', name: 'read_note', arguments: '{}' } };
  const message = (provider: 'openai' | 'anthropic' | 'responses', bad: unknown): unknown =>
    provider === 'openai' ? { role: 'assistant', tool_calls: [bad, good.openai] } : provider === 'anthropic' ? { role: 'assistant', content: [bad, good.anthropic] } : [bad, good.responses];
  it.each([
    ['openai', { type: 'function', function: { name: 'read_note', arguments: '{}' } }, 'has no id'],
    ['openai', { id: '', type: 'function', function: { name: 'read_note', arguments: '{}' } }, 'has no id'],
    ['openai', null, 'has no id'],
    ['openai', { id: 'bad', type: 'function' }, 'names no tool'],
    ['openai', { id: 'bad', type: 'function', function: { name: 7, arguments: '{}' } }, 'names no tool'],
    ['anthropic', { type: 'tool_use', name: 'read_note', input: {} }, 'has no id'],
    ['anthropic', { type: 'tool_use', id: 'bad', input: {} }, 'names no tool'],
    ['responses', { type: 'function_call', call_id: '', name: 'read_note', arguments: '{}' }, 'has no id'],
    ['responses', { type: 'function_call', call_id: 'bad', name: null, arguments: '{}' }, 'names no tool'],
  ] as const)('%s: %j', async (provider, bad, said) => {
    let ran = 0;
    const e = createEngine({ policy: { default: 'allow' }, tools: [defineTool({ name: 'read_note', description: 'Read.', parameters: { type: 'object' }, execute: () => ((ran += 1), 'note') })] });
    const { results, messages } = await e.runMessage(provider, message(provider, bad));
    // The malformed call is INVALID_ARGS, never run; the well-formed one beside it runs and keeps its id.
    expect(results.map((r) => (r.isError ? r.error.code : 'ok'))).toEqual(['INVALID_ARGS', 'ok']);
    expect(results[0]!.content).toContain(said);
    expect(results[1]).toMatchObject({ callId: 'ok', value: 'note', isError: false });
    expect(ran).toBe(1);
    expect(messages.length).toBeGreaterThan(0);
  });
});
