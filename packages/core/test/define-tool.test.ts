import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AirlockError, ToolRegistry, defineTool, type AnyTool } from '../src/index.js';

const valid = { name: 'echo', description: 'Echo text.', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: () => null };

function registrationError(tool: unknown, registry = new ToolRegistry()): AirlockError {
  try {
    registry.register(tool as AnyTool);
  } catch (error) {
    if (AirlockError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected registration to fail');
}

describe('registration errors name the tool and the field', () => {
  it.each([
    ['bad name', { ...valid, name: 'has space' }, 'INVALID_TOOL_DEFINITION', 'name'],
    ['name too long', { ...valid, name: 'x'.repeat(65) }, 'INVALID_TOOL_DEFINITION', 'name'],
    ['empty description', { ...valid, description: ' ' }, 'INVALID_TOOL_DEFINITION', 'description'],
    ['missing execute', { ...valid, execute: undefined }, 'INVALID_TOOL_DEFINITION', 'execute'],
    ['zero timeout', { ...valid, timeoutMs: 0 }, 'INVALID_TOOL_DEFINITION', 'timeoutMs'],
    ['NaN timeout', { ...valid, timeoutMs: NaN }, 'INVALID_TOOL_DEFINITION', 'timeoutMs'],
    ['infinite timeout', { ...valid, timeoutMs: Infinity }, 'INVALID_TOOL_DEFINITION', 'timeoutMs'],
    ['a timeout past what a timer holds (it would fire at once)', { ...valid, timeoutMs: 2 ** 31 }, 'INVALID_TOOL_DEFINITION', 'timeoutMs'],
    ['string deferLoading', { ...valid, deferLoading: 'yes' }, 'INVALID_TOOL_DEFINITION', 'deferLoading'],
    ['non-function classifier', { ...valid, isConcurrencySafe: true }, 'INVALID_TOOL_DEFINITION', 'isConcurrencySafe'],
    ['a thirteenth field', { ...valid, secret: 'x' }, 'INVALID_TOOL_DEFINITION', 'secret'],
    ['non-object parameters root', { ...valid, parameters: { type: 'string' } }, 'INVALID_TOOL_DEFINITION', 'parameters'],
    ['parameters not an object', { ...valid, parameters: 'nope' }, 'UNSUPPORTED_SCHEMA', 'parameters'],
    ['parameters with a function', { ...valid, parameters: { type: 'object', default: () => 1 } }, 'NOT_LOSSLESS_JSON', undefined],
    ['an unusable schema', { ...valid, parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } }, 'UNSUPPORTED_SCHEMA', 'parameters'],
    ['an unusable output schema', { ...valid, output: { type: 12 } }, 'UNSUPPORTED_SCHEMA', 'output'],
  ])('%s', (_case, tool, code, field) => {
    const error = registrationError(tool);
    expect(error.code).toBe(code);
    expect(error.message).toContain(String((tool as { name: string }).name).slice(0, 10));
    if (field !== undefined) expect(error.details.field).toBe(field);
  });

  it('refuses a duplicate name', () => {
    const registry = new ToolRegistry([defineTool(valid)]);
    const error = registrationError(valid, registry);
    expect(error.code).toBe('DUPLICATE_TOOL');
    expect(error.message).toContain('"echo"');
  });

  it('refuses a zod schema with no JSON Schema form', () => {
    const error = registrationError({ ...valid, parameters: z.object({ when: z.date() }) });
    expect(error.code).toBe('UNSUPPORTED_SCHEMA');
    expect(error.details).toMatchObject({ tool: 'echo', field: 'parameters' });
  });
});

describe('defineTool with zod', () => {
  it('converts to JSON Schema without the dialect marker and types execute', async () => {
    const tool = defineTool({
      name: 'add',
      description: 'Add two numbers.',
      parameters: z.object({ a: z.number(), b: z.number().default(1) }),
      execute: (args) => args.a + args.b,
    });
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number', default: 1 } }, required: ['a'] });
    expect(tool.parameters).not.toHaveProperty('$schema');
    // zod parses before execute, so defaults apply.
    const exec = { callId: 'c', toolName: 'add', signal: new AbortController().signal, tenant: undefined, setMetadata: () => undefined };
    expect(await tool.execute({ a: 2 }, exec)).toBe(3);
  });
});

describe('registry lookup', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('%s is simply unknown', (name) => {
    const registry = new ToolRegistry([defineTool(valid)]);
    expect(registry.get(name)).toBeUndefined();
  });

  it('unregisters', () => {
    const registry = new ToolRegistry([defineTool(valid)]);
    expect(registry.unregister('echo')).toBe(true);
    expect(registry.get('echo')).toBeUndefined();
    expect(registry.unregister('echo')).toBe(false);
  });
});
