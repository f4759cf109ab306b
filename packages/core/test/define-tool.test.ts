import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AirlockError, ToolRegistry, createEngine, defineTool, type AnyTool, type ExecContext, type JsonObject } from '../src/index.js';

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
    // Gemini refuses a function name that does not start with a letter or "_".
    ['name starting with a digit', { ...valid, name: '2fa_check' }, 'INVALID_TOOL_DEFINITION', 'name'],
    ['name starting with "-"', { ...valid, name: '-dash' }, 'INVALID_TOOL_DEFINITION', 'name'],
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
    // The engine parses with zod before execute, so defaults apply.
    const [result] = await createEngine({ tools: [tool], policy: { default: 'allow' } }).run([{ id: 'c', name: 'add', arguments: '{"a":2}' }]);
    expect(result).toMatchObject({ isError: false, value: 3 });
  });

  it('permission rules, guards and the approver decide on the arguments as zod parsed them, the ones the body receives', async () => {
    const opened: string[] = [];
    const asked: unknown[] = [];
    const readFile = defineTool({
      name: 'read_file',
      description: 'Read a file.',
      parameters: z.object({ path: z.string().trim().toLowerCase().default('/etc/shadow') }),
      execute: ({ path }) => {
        opened.push(path);
        return 'contents';
      },
    });
    const engine = createEngine({
      tools: [readFile],
      policy: { default: 'ask', rules: [{ tool: 'read_file', when: { path: '/etc/**' }, decision: 'deny', reason: 'no system files' }] },
      guards: [({ args }) => (String(args.path).includes('secret') ? { deny: 'no secrets' } : undefined)],
      approver: ({ args }) => {
        asked.push(args);
        return true;
      },
    });
    const results = await engine.run(['{"path":" /etc/passwd"}', '{"path":"/ETC/passwd"}', '{}', '{"path":" /tmp/SECRET "}', '{"path":"  /tmp/Notes.md"}'].map((args, index) => ({ id: `c${index}`, name: 'read_file', arguments: args })));
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['PERMISSION_DENIED', 'PERMISSION_DENIED', 'PERMISSION_DENIED', 'PERMISSION_DENIED', 'ok']);
    expect(opened).toEqual(['/tmp/notes.md']);
    // The gate (here: ask) comes before the guards, so the approver saw the secret one too, lowercased.
    expect(asked).toEqual([{ path: '/tmp/secret' }, { path: '/tmp/notes.md' }]);
  });

  it('arguments that fail a refinement zod keeps out of the JSON Schema are INVALID_ARGS from the parse stage; a transform that returns no JSON is the tool\'s error', async () => {
    const ran: unknown[] = [];
    const range = defineTool({
      name: 'range',
      description: 'A range.',
      parameters: z.object({ from: z.number(), to: z.number() }).refine((value) => value.from <= value.to, 'from must be <= to'),
      execute: (args) => ran.push(args),
    });
    const dated = defineTool({
      name: 'dated',
      description: 'A date.',
      parameters: z.object({ when: z.string().transform((text) => new Date(text)) }),
      execute: (args) => ran.push(args),
    });
    const engine = createEngine({ tools: [range, dated], policy: { default: 'allow' } });
    const [refused, notJson] = await engine.run([{ id: 'a', name: 'range', arguments: '{"from":5,"to":1}' }, { id: 'b', name: 'dated', arguments: '{"when":"2026-12-01"}' }]);
    expect(refused).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS', message: 'range: invalid arguments: from must be <= to' } });
    expect(notJson).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR' } });
    expect((notJson as { error: { message: string } }).error.message).toContain('not JSON');
    expect(ran).toEqual([]);
  });

  it('a zod tool spread into a new definition keeps its zod parse: refinements and defaults still apply', async () => {
    const ran: unknown[] = [];
    const fetchTool = defineTool({
      name: 'fetch_api',
      description: 'Fetch from the API.',
      parameters: z.object({ url: z.string().refine((url) => url.startsWith('https://api.example.com/'), 'only api.example.com'), mode: z.string().default('read') }),
      execute: (args) => ran.push(args),
    });
    const spread = { ...fetchTool, timeoutMs: 1000 };
    const redefined = defineTool({ ...fetchTool, execute: (args: JsonObject, exec: ExecContext) => fetchTool.execute(args, exec) } as never);
    const engine = createEngine({ tools: [spread], policy: { default: 'allow' } });
    const again = createEngine({ tools: [redefined], policy: { default: 'allow' } });
    for (const e of [engine, again]) {
      const [refused, passed] = await e.run([
        { id: 'a', name: 'fetch_api', arguments: '{"url":"http://169.254.169.254/latest/meta-data/"}' },
        { id: 'b', name: 'fetch_api', arguments: '{"url":"https://api.example.com/x"}' },
      ]);
      expect(refused).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS', message: 'fetch_api: invalid arguments: /url: only api.example.com' } });
      expect(passed).toMatchObject({ isError: false });
    }
    expect(ran).toEqual([{ url: 'https://api.example.com/x', mode: 'read' }, { url: 'https://api.example.com/x', mode: 'read' }]);
  });

  it('a transform runs once: the body gets z.output, not z.output parsed again', async () => {
    const doubled = defineTool({ name: 'doubled', description: 'Doubles.', parameters: z.object({ n: z.number().transform((n) => n * 2) }), execute: ({ n }) => n });
    const [result] = await createEngine({ tools: [doubled], policy: { default: 'allow' } }).run([{ id: 'c', name: 'doubled', arguments: '{"n":21}' }]);
    expect(result).toMatchObject({ isError: false, value: 42 });
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

it('a description accessor is read once: the definition keeps the string that passed the check', () => {
  let reads = 0;
  const input = { name: 't', parameters: { type: 'object' }, execute: () => null } as Record<string, unknown>;
  Object.defineProperty(input, 'description', { enumerable: true, get: () => (reads++ === 0 ? 'reads files' : 42) });
  expect(defineTool(input as never).description).toBe('reads files');
});
