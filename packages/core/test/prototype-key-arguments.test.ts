// JSON.parse makes a "__proto__" key an own property: permission rules and validation read it
// as data, but a tool that copies its arguments (Object.assign, a for-in loop) takes it as the
// copy's prototype. A deny on `path` once let {"__proto__": {"path": "/etc/passwd"}} through,
// and the tool read /etc/passwd from its merged copy. No tool can declare such a property
// (the validator refuses one), so a call holding the key, anywhere, is refused before the gate.
import { describe, expect, it } from 'vitest';
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
