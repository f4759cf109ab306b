// A number literal too large for a double parses to Infinity: it must not pass validation
// and then reach the tool as null. The value validated is the value delivered.
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
});
