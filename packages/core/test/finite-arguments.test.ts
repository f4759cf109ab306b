// A number literal too large for a double parses to Infinity: it must not pass validation
// and then reach the tool as null. An integer past 2^53 is rounded: it must not reach the
// tool (or a permission rule) as a neighbouring number. The value validated is the value delivered.
import { describe, expect, it } from 'vitest';
import { defineTool, type JsonValue, type ToolFailure } from '../src/index.js';
import { call, engine } from './helpers.js';

describe('arguments with numbers JSON cannot carry', () => {
  const received: JsonValue[] = [];
  const counter = defineTool({
    name: 'counter',
    description: 'counts',
    parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1 }, list: { type: 'array' } } },
    execute: (args: JsonValue) => {
      received.push(args);
      return { ok: true };
    },
  });

  it.each([
    ['{"n": 1e400}', 'n'],
    ['{"n": -1e400}', 'n'],
    ['{"list": [1, 2, 1e999]}', 'list[2]'],
    [`{"n": 1${'0'.repeat(400)}}`, 'n'],
  ])('%s is INVALID_ARGS naming %s, and the tool never runs', async (text, path) => {
    received.length = 0;
    const [result] = await engine([counter]).run([call('counter', text)]);
    expect(result?.isError).toBe(true);
    expect((result as ToolFailure).error.code).toBe('INVALID_ARGS');
    expect((result as ToolFailure).error.message).toContain(path);
    expect(received).toEqual([]);
  });

  it('large but finite numbers still pass', async () => {
    received.length = 0;
    const [result] = await engine([counter]).run([call('counter', '{"n": 1e300}')]);
    expect(result?.isError).toBe(false);
    expect(received).toEqual([{ n: 1e300 }]);
  });

  it.each([
    ['{"n": 9007199254740993}', 'n is 9007199254740993, an integer a JSON number cannot hold exactly (it would arrive as 9007199254740992)'],
    ['{"list": [1, -12345678901234567891]}', 'list[1] is -12345678901234567891'],
    ['{"n": 9007199254740993.0}', 'n is 9007199254740993.0'],
    ['{"n": 9.007199254740993e15}', 'n is 9.007199254740993e15'],
    ['{"n": 90071992547409930e-1}', 'n is 90071992547409930e-1'],
    ['{"n": -9007199254740993.00}', 'n is -9007199254740993.00'],
  ])('%s (an integer a double rounds) is INVALID_ARGS naming it as written, and the tool never runs', async (text, message) => {
    received.length = 0;
    const [result] = await engine([counter]).run([call('counter', text)]);
    expect((result as ToolFailure).error.code).toBe('INVALID_ARGS');
    expect((result as ToolFailure).error.message).toContain(message);
    expect(received).toEqual([]);
  });

  it('integers a double holds exactly pass, however long, and so do digits inside strings', async () => {
    received.length = 0;
    const text = '{"n": 9007199254740992, "list": [100000000000000000000, -9007199254740991, "9007199254740993", 1.00000000000000001, 1e23, 123456789012345678.5]}';
    const [result] = await engine([counter]).run([call('counter', text)]);
    expect(result?.isError).toBe(false);
    expect(received).toEqual([{ n: 9007199254740992, list: [1e20, -9007199254740991, '9007199254740993', 1, 1e23, Number('123456789012345678.5')] }]);
  });
});
