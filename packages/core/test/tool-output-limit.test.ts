// A tool's own maxOutputBytes replaces the engine's limits.maxOutputBytes for that tool.
import { describe, expect, it } from 'vitest';
import { AirlockError, defineTool, type ToolFailure } from '../src/index.js';
import { call, engine, tool } from './helpers.js';

describe('maxOutputBytes per tool', () => {
  it('a tool may return more than the engine limit when its own limit allows it', async () => {
    const [result] = await engine([tool('big', { maxOutputBytes: 300, execute: () => 'x'.repeat(200) })], { limits: { maxOutputBytes: 100 } }).run([call('big')]);
    expect(result!.isError).toBe(false);
  });

  it('a tool\'s lower limit holds under a higher engine limit, for the value and for the content', async () => {
    const [value, content] = await engine([
      tool('value', { maxOutputBytes: 50, execute: () => 'x'.repeat(200) }),
      tool('content', { maxOutputBytes: 50, execute: () => 'short', projectContent: () => 'y'.repeat(200) }),
    ], { limits: { maxOutputBytes: 1000 } }).run([call('value'), call('content')]);
    expect((value as ToolFailure).error).toMatchObject({ code: 'OUTPUT_TOO_LARGE', message: 'value: the result is larger than 50 bytes' });
    expect((content as ToolFailure).error).toMatchObject({ code: 'OUTPUT_TOO_LARGE', message: 'content: the content is larger than 50 bytes' });
  });

  it.each([0, -1, 1.5, '100'])('maxOutputBytes %j is an INVALID_TOOL_DEFINITION naming the field', (maxOutputBytes) => {
    const define = () => defineTool({ name: 't', description: 'd', parameters: { type: 'object' }, execute: () => null, maxOutputBytes } as never);
    expect(define).toThrow(AirlockError);
    expect(define).toThrow(/maxOutputBytes must be a positive whole number of bytes/);
  });
});
