import { describe, expect, it } from 'vitest';
import { PROVIDERS, PROVIDER_IDS, ToolRegistry, createEngine, defineTool, mcpCallToolResult, schemaOf, HOST_ONLY_FIELDS, MODEL_FACING_FIELDS, type ToolFailure } from '../src/index.js';
import { call, engine, tool } from './helpers.js';

// A tool carrying all thirteen fields, with host-only values that would be unmistakable if leaked.
const LEAK = 'HOST_ONLY_SECRET';
const full = defineTool({
  name: 'read_note',
  description: 'Read a note by id.',
  parameters: { type: 'object', properties: { id: { type: 'string', description: 'note id' } }, required: ['id'], additionalProperties: false },
  deferLoading: true,
  output: { type: 'object', properties: { text: { type: 'string' } }, title: LEAK },
  execute: () => ({ text: LEAK }),
  projectContent: () => LEAK,
  finalizeContent: () => LEAK,
  timeoutMs: 4242,
  maxOutputBytes: 4343,
  isConcurrencySafe: () => true,
  presentCall: () => ({ title: LEAK }),
  presentResult: () => ({ title: LEAK }),
});

/** Every key at every depth, as dotted paths. */
function walk(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => [`${prefix}${key}`, ...walk(child, `${prefix}${key}.`)]);
}

const parameterKeys = walk(full.parameters);

const expectedKeys: Record<string, string[]> = {
  openai: ['type', 'function', 'function.name', 'function.description', 'function.parameters', ...parameterKeys.map((k) => `function.parameters.${k}`)],
  responses: ['type', 'name', 'description', 'parameters', 'strict', ...parameterKeys.map((k) => `parameters.${k}`)],
  anthropic: ['name', 'description', 'input_schema', 'defer_loading', ...parameterKeys.map((k) => `input_schema.${k}`)],
  gemini: ['name', 'description', 'parametersJsonSchema', ...parameterKeys.map((k) => `parametersJsonSchema.${k}`)],
  mcp: ['name', 'description', 'inputSchema', ...parameterKeys.map((k) => `inputSchema.${k}`)],
};

describe('projection carries exactly the model-facing fields', () => {
  it('the thirteen fields are split four and nine', () => {
    expect([...MODEL_FACING_FIELDS, ...HOST_ONLY_FIELDS]).toHaveLength(13);
    expect(Object.keys(full).sort()).toEqual([...MODEL_FACING_FIELDS, ...HOST_ONLY_FIELDS].sort());
  });

  it.each([
    ['a getter that changes', () => { let n = 0; return { type: 'object', get description() { return `read ${(n += 1)}`; } }; }],
    ['a function', () => ({ type: 'object', check: () => true })],
    ['NaN', () => ({ type: 'object', maximum: Number.NaN })],
    ['toJSON', () => ({ type: 'object', toJSON: () => ({ type: 'string' }) })],
    ['a class instance', () => ({ type: 'object', properties: { at: new (class Point { x = 1; })() } })],
    ['a cycle', () => { const schema: Record<string, unknown> = { type: 'object' }; schema.self = schema; return schema; }],
  ])('schemaOf on a definition never registered refuses parameters with %s, naming the tool', (_case, parameters) => {
    expect(() => schemaOf({ name: 'raw_tool', description: 'Raw.', parameters: parameters() as never })).toThrow(expect.objectContaining({ code: 'NOT_LOSSLESS_JSON', message: expect.stringContaining('tool "raw_tool" parameters') }));
  });

  it('schemaOf copies exactly the four model-facing fields', () => {
    expect(Object.keys(schemaOf(full)).sort()).toEqual(['deferLoading', 'description', 'name', 'parameters']);
  });

  it.each(PROVIDER_IDS)('%s: every key of the output is expected, none is host-only', (provider) => {
    const [tool] = PROVIDERS[provider].tools([schemaOf(full)]);
    expect(walk(tool).sort()).toEqual([...expectedKeys[provider]!].sort());
    const text = JSON.stringify(tool);
    expect(text).not.toContain(LEAK);
    expect(text).not.toContain('4242');
    expect(text).not.toContain('4343');
    for (const field of HOST_ONLY_FIELDS) expect(walk(tool)).not.toContain(field);
  });

  it('the engine\'s MCP list carries outputSchema for a tool that declares an object output (and whose content is its value)', () => {
    const { projectContent: _projected, finalizeContent: _finalized, ...valueAsContent } = full;
    const engine = createEngine({ policy: { default: 'allow' }, tools: [defineTool(valueAsContent)] });
    const entry = engine.tools('mcp')[0]!;
    expect(entry.outputSchema).toEqual(full.output);
    expect(JSON.stringify(entry)).not.toContain('4242');
  });

  it('a tools/call reply through runMessage carries the structuredContent that outputSchema promises', async () => {
    const weather = defineTool({ name: 'weather', description: 'w', parameters: { type: 'object' }, output: { type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] }, execute: () => ({ tempC: 21 }) });
    const engine = createEngine({ policy: { default: 'allow' }, tools: [weather] });
    expect(engine.tools('mcp')[0]).toHaveProperty('outputSchema');
    const { messages } = await engine.runMessage('mcp', { name: 'weather', arguments: {} });
    expect(messages).toEqual([{ content: [{ type: 'text', text: '{"tempC":21}' }], isError: false, structuredContent: { tempC: 21 } }]);
  });

  it('deferLoading reaches Anthropic only when set', () => {
    const plain = defineTool({ name: 'plain', description: 'd', parameters: { type: 'object' }, execute: () => null });
    const [tool] = PROVIDERS.anthropic.tools([schemaOf(plain)]);
    expect(tool).not.toHaveProperty('defer_loading');
  });

  it('mutating what schemas() returned never changes the registry', () => {
    const registry = new ToolRegistry([full]);
    const first = registry.schemas()[0] as unknown as { parameters: { properties: Record<string, unknown> }; description: string };
    first.parameters.properties.injected = { type: 'string' };
    first.description = 'changed';
    const second = registry.schemas()[0]!;
    expect(second.parameters).toEqual(full.parameters);
    expect(second.description).toBe('Read a note by id.');
  });
});

describe('host-only fields stay out of what the model reads, failures included', () => {
  it('an output schema, a timeout and a size limit appear in error.message for the host, never in the content', async () => {
    const subject = engine([
      tool('audit', { output: { type: 'object', properties: { token: { type: 'string', pattern: '^sk-live-[0-9a-f]{8}$' }, tier: { enum: ['gold-internal'] } } }, execute: () => ({ token: 'x', tier: 'y' }) }),
      tool('slow', { timeoutMs: 137, execute: () => new Promise(() => undefined) }),
      tool('big', { maxOutputBytes: 1234, execute: () => 'x'.repeat(2000) }),
    ]);
    const results = await subject.run([call('audit'), call('slow'), call('big')]);
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['INVALID_TOOL_OUTPUT', 'TIMEOUT', 'OUTPUT_TOO_LARGE']);
    const [audit, slow, big] = results as ToolFailure[];
    expect(audit!.error.message).toContain('sk-live');
    for (const secret of ['sk-live', 'gold-internal', 'token', 'pattern']) expect(audit!.content).not.toContain(secret);
    expect(slow!.content).not.toContain('137');
    expect(big!.error.message).toContain('1234');
    expect(big!.content).not.toContain('1234');
  });
});

describe('provider calls and results round-trip', () => {
  const ok = Object.freeze({ callId: 'call_1', name: 'read_note', content: '{"text":"hi"}', durationMs: 1, isError: false as const, value: { text: 'hi' } });
  const bad = Object.freeze({ callId: 'call_2', name: 'read_note', content: 'Error [INVALID_ARGS]: x', durationMs: 1, isError: true as const, error: { code: 'INVALID_ARGS' as const, message: 'x' } });

  it('openai: parses string arguments and answers role=tool messages', () => {
    const calls = PROVIDERS.openai.parseCalls({ role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_note', arguments: '{"id":"a"}' } }] });
    expect(calls).toEqual([{ id: 'call_1', name: 'read_note', arguments: '{"id":"a"}' }]);
    expect(PROVIDERS.openai.toolMessages([ok, bad])).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '{"text":"hi"}' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error [INVALID_ARGS]: x' },
    ]);
  });

  it('anthropic: parses tool_use input objects and flags errors with is_error', () => {
    const calls = PROVIDERS.anthropic.parseCalls({ role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 'toolu_1', name: 'read_note', input: { id: 'a' } }] });
    expect(calls).toEqual([{ id: 'toolu_1', name: 'read_note', arguments: { id: 'a' } }]);
    const message = PROVIDERS.anthropic.toolMessages([ok, bad])[0]!;
    expect(message.role).toBe('user');
    expect(message.content[0]).not.toHaveProperty('is_error');
    expect(message.content[1]).toMatchObject({ tool_use_id: 'call_2', is_error: true });
  });

  it('responses: an accumulated input list runs only the calls still without an output (an answered charge is not made twice)', async () => {
    const ran: unknown[] = [];
    const subject = engine([tool('charge', { parameters: { type: 'object', properties: { cents: { type: 'integer' } } }, execute: (args) => (ran.push(args), 'ok') })]);
    const { results } = await subject.runMessage('responses', [
      { role: 'user', content: 'charge 500 then 700' },
      { type: 'function_call', call_id: 'c1', name: 'charge', arguments: '{"cents":500}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      { type: 'function_call', call_id: 'c2', name: 'charge', arguments: '{"cents":700}' },
    ]);
    expect(ran).toEqual([{ cents: 700 }]);
    expect(results.map((result) => result.callId)).toEqual(['c2']);
    // An output answers only a call before it: a server that numbers ids per response reuses them.
    ran.length = 0;
    await subject.runMessage('responses', [
      { type: 'function_call', call_id: 'call_0', name: 'charge', arguments: '{"cents":500}' },
      { type: 'function_call_output', call_id: 'call_0', output: 'ok' },
      { type: 'function_call', call_id: 'call_0', name: 'charge', arguments: '{"cents":700}' },
    ]);
    expect(ran).toEqual([{ cents: 700 }]);
  });

  it('responses: parses function_call items and answers function_call_output', () => {
    const calls = PROVIDERS.responses.parseCalls({ output: [{ type: 'message' }, { type: 'function_call', call_id: 'call_1', name: 'read_note', arguments: '{}' }] });
    expect(calls).toEqual([{ id: 'call_1', name: 'read_note', arguments: '{}' }]);
    expect(PROVIDERS.responses.toolMessages([ok])).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: '{"text":"hi"}' }]);
  });

  it('gemini: parses functionCall parts and answers output or error', () => {
    const calls = PROVIDERS.gemini.parseCalls({ role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'read_note', args: { id: 'a' } } }] });
    expect(calls).toEqual([{ id: 'call_1', name: 'read_note', arguments: { id: 'a' } }]);
    const content = PROVIDERS.gemini.toolMessages([ok, bad])[0]!;
    expect(content.parts[0]!.functionResponse.response).toHaveProperty('output');
    expect(content.parts[1]!.functionResponse.response).toHaveProperty('error');
  });

  it('gemini: a call without an id gets a stand-in no model id can be; the response echoes exactly the ids the model sent', async () => {
    const engine = createEngine({ tools: [defineTool({ name: 'echo', description: 'Echo.', parameters: { type: 'object' }, execute: () => 'ok' })], policy: { default: 'allow' } });
    // A model's own id that looks like an old-style stand-in, beside a call with none at that index.
    const model = { role: 'model', parts: [{ functionCall: { id: 'gemini-call-1', name: 'echo', args: {} } }, { functionCall: { name: 'echo', args: {} } }] };
    const { results, messages } = await engine.runMessage('gemini', model);
    expect(results.map((result) => result.isError)).toEqual([false, false]);
    expect(results[1]!.callId).not.toBe('gemini-call-1');
    const parts = (messages[0] as { parts: { functionResponse: { id?: string } }[] }).parts;
    expect(parts.map((part) => part.functionResponse.id)).toEqual(['gemini-call-1', undefined]);
  });

  it('mcp: parses tools/call params and answers CallToolResult with isError', () => {
    const calls = PROVIDERS.mcp.parseCalls({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_note', arguments: { id: 'a' } } });
    expect(calls).toEqual([{ id: '7', name: 'read_note', arguments: { id: 'a' } }]);
    expect(PROVIDERS.mcp.toolMessages([ok, bad])).toEqual([
      { content: [{ type: 'text', text: '{"text":"hi"}' }], isError: false },
      { content: [{ type: 'text', text: 'Error [INVALID_ARGS]: x' }], isError: true },
    ]);
  });

  it('mcp: structuredContent only for a tool that declares an object output schema', () => {
    expect(mcpCallToolResult(ok, { type: 'object' })).toMatchObject({ structuredContent: { text: 'hi' } });
    expect(mcpCallToolResult(ok, undefined)).not.toHaveProperty('structuredContent');
    expect(mcpCallToolResult(ok, { type: 'string' })).not.toHaveProperty('structuredContent');
    expect(mcpCallToolResult(bad, { type: 'object' })).not.toHaveProperty('structuredContent');
  });

  it('mcp: a tool whose content is not its value (projectContent, finalizeContent) shares neither outputSchema nor structuredContent', async () => {
    const output = { type: 'object', properties: { name: { type: 'string' }, ssn: { type: 'string' } } } as const;
    const execute = () => ({ name: 'Ann', ssn: '123-45-6789' });
    const projected = defineTool({ name: 'projected', description: 'd', parameters: { type: 'object' }, output, execute, projectContent: (_args, value) => `name: ${(value as { name: string }).name}` });
    const finalized = defineTool({ name: 'finalized', description: 'd', parameters: { type: 'object' }, output, execute, finalizeContent: () => 'done' });
    const plain = defineTool({ name: 'plain', description: 'd', parameters: { type: 'object' }, output, execute });
    const engine = createEngine({ tools: [projected, finalized, plain], policy: { default: 'allow' } });
    expect(engine.tools('mcp').map((tool) => [tool.name, 'outputSchema' in tool])).toEqual([['projected', false], ['finalized', false], ['plain', true]]);
    const replies = await Promise.all(['projected', 'finalized', 'plain'].map(async (name) => (await engine.runMessage('mcp', { name, arguments: {} })).messages[0]));
    expect(replies).toEqual([
      { content: [{ type: 'text', text: 'name: Ann' }], isError: false },
      { content: [{ type: 'text', text: 'done' }], isError: false },
      { content: [{ type: 'text', text: '{"name":"Ann","ssn":"123-45-6789"}' }], isError: false, structuredContent: { name: 'Ann', ssn: '123-45-6789' } },
    ]);
  });

  it.each(PROVIDER_IDS.filter((id) => id !== 'responses'))('%s: a message of the wrong shape is a coded error', (provider) => {
    expect(() => PROVIDERS[provider].parseCalls(42)).toThrow(expect.objectContaining({ code: 'INVALID_PROVIDER_MESSAGE' }));
  });
});

describe('a tool list for a tenant', () => {
  const tools = [tool('search'), tool('admin_drop'), tool('publish')];
  const e = engine(tools, { policy: { default: 'allow', rules: [{ tool: 'admin_*', decision: 'deny', tenants: ['acme'] }, { tool: 'publish', decision: 'ask' }] } });
  const names = (list: unknown[]): string[] => list.map((entry) => JSON.stringify(entry).match(/"name":"(\w+)"/)![1]!);

  it.each(PROVIDER_IDS)('%s: leaves out the tools the policy denies that tenant outright, keeps those it asks about', (provider) => {
    expect(names(e.tools(provider, { tenant: 'acme' }))).toEqual(['search', 'publish']);
    expect(names(e.tools(provider, { tenant: 'ops' }))).toEqual(['search', 'admin_drop', 'publish']);
    // Without options, every registered tool, as before.
    expect(names(e.tools(provider))).toEqual(['search', 'admin_drop', 'publish']);
  });
});
