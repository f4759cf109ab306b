// JSON.parse makes a "__proto__" key an own property: permission rules and validation read it
// as data, but a tool that copies its arguments (Object.assign, a for-in loop) takes it as the
// copy's prototype. A deny on `path` once let {"__proto__": {"path": "/etc/passwd"}} through,
// and the tool read /etc/passwd from its merged copy. No tool can declare such a property
// (the validator refuses one), so a call holding the key, anywhere, is refused before the gate.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEngine, defineTool, type JsonValue, type ToolFailure } from '../src/index.js';
import { call } from './helpers.js';

describe('arguments holding a "__proto__" key', () => {
  const received: JsonValue[] = [];
  const read = defineTool({
    name: 'read',
    description: 'reads a file',
    parameters: { type: 'object', properties: { path: { type: 'string' }, opts: { type: 'object' } } },
    execute: (args: JsonValue) => {
      received.push(args);
      return { path: Object.assign({}, args as object) as unknown as JsonValue };
    },
  });
  const engine = createEngine({ tools: [read], policy: { default: 'allow', rules: [{ tool: 'read', when: { path: '/etc/**' }, decision: 'deny', reason: 'no etc' }] } });

  it.each([
    ['{"__proto__": {"path": "/etc/passwd"}}', 'the arguments hold a key named "__proto__"'],
    ['{"path": "/tmp/a", "opts": {"__proto__": {"x": 1}}}', 'opts holds a key named "__proto__"'],
    ['{"opts": {"list": [{"__proto__": null}]}}', 'opts.list[0] holds a key named "__proto__"'],
  ])('%s is INVALID_ARGS, and the tool never runs', async (text, message) => {
    received.length = 0;
    const [result] = await engine.run([call('read', text)]);
    expect((result as ToolFailure).error.code).toBe('INVALID_ARGS');
    expect((result as ToolFailure).error.message).toContain(message);
    expect(received).toEqual([]);
  });

  it('is refused when the arguments arrive as an object too (MCP, Anthropic, Gemini, Code Mode)', async () => {
    received.length = 0;
    const args = JSON.parse('{"__proto__": {"path": "/etc/passwd"}}') as JsonValue;
    const [result] = await engine.run([{ id: 'c1', name: 'read', arguments: args }]);
    expect((result as ToolFailure).error.code).toBe('INVALID_ARGS');
    expect(received).toEqual([]);
  });

  it('a key that merely contains the word, or a "__proto__" string value, passes', async () => {
    received.length = 0;
    const [result] = await engine.run([call('read', '{"path": "/tmp/__proto__", "opts": {"x__proto__": "__proto__"}}')]);
    expect(result?.isError).toBe(false);
    expect(received).toHaveLength(1);
  });
});

describe('a "__proto__" key made by a zod tool\'s own parse', () => {
  const received: JsonValue[] = [];
  // A JSON string field, parsed by the schema: the model's text becomes keys after the check.
  const configure = defineTool({
    name: 'configure',
    description: 'applies options given as JSON text',
    parameters: z.object({ options: z.string().transform((text) => JSON.parse(text) as unknown) }),
    execute: (args) => {
      received.push(args as JsonValue);
      return { path: (Object.assign({}, (args as { options: object }).options) as { path?: string }).path ?? null };
    },
  });
  const whole = defineTool({ name: 'whole', description: 'x', parameters: z.object({}).transform(() => 5), execute: (args) => (received.push(args as JsonValue), 'ran') });
  const engine = createEngine({ tools: [configure, whole], policy: { default: 'allow' } });

  it('is INVALID_ARGS, as it is in the raw arguments, and the tool never runs', async () => {
    received.length = 0;
    const [result] = await engine.run([call('configure', JSON.stringify({ options: '{"__proto__": {"path": "/etc/passwd"}}' }))]);
    expect((result as ToolFailure).error).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('options holds, once parsed by the tool\'s schema, a key named "__proto__"') });
    expect(received).toEqual([]);
    const [plain] = await engine.run([call('configure', JSON.stringify({ options: '{"path": "/tmp/a"}' }))]);
    expect(plain).toMatchObject({ isError: false, value: { path: '/tmp/a' } });
  });

  it('a schema that turns the arguments into no object is the tool\'s error, and the tool never runs', async () => {
    received.length = 0;
    const [result] = await engine.run([call('whole', '{}')]);
    expect((result as ToolFailure).error).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('not an object') });
    expect(received).toEqual([]);
  });
});
