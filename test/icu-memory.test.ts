// An Intl object holds ICU memory its isolate's heap limit does not count (a kept
// DateTimeFormat about 26 KB beside a few bytes of heap): 80,000 of them in a 64 MiB isolate
// once took a whole sandbox process past its 2 GiB ceiling, and its neighbours' calls with it.
// A call may make 500, and an isolate whose realms made more than 500 in all is replaced
// after that call (warm realms keep theirs; a fresh realm's garbage waits for a collection a
// small heap seldom needs).
import type { ToolFailure, ToolResult } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestSandbox } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const outcome = (result: ToolResult | undefined): unknown => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error : result.value);

async function open(): Promise<(name: string, args?: Record<string, unknown>) => Promise<unknown>> {
  const opened = await openTestSandbox('hostile/icu-hoard.js', { realm: 'warm', limits: { cpuMs: 5000, timeoutMs: 20_000 } }, { threads: 1, processes: 1 });
  cleanups.push(opened.close);
  return async (name, args = {}) => outcome((await opened.engine.run([{ id: 'c', name, arguments: JSON.stringify(args) }], { tenant: 't' }))[0]);
}

describe('ICU memory a heap limit does not see', () => {
  it('a call that makes more than 500 Intl objects fails with a reason; V8\'s own v8BreakIterator is not offered; Intl used the ordinary way is unchanged', async () => {
    const call = await open();
    const ordinary = { breakIterator: 'undefined', date: '1/1/70', num: '1.234,5', inst: true, ctor: true, name: 'DateTimeFormat', sup: 'function', segs: ['hi', ' ', 'there'], loc: '1/1/1970, 12:00:00 AM' };
    expect(await call('fmt')).toEqual(ordinary);
    expect(await call('hoard', { n: 600 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 500 Intl objects/) });
    expect(await call('segs', { n: 600 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 500 Intl objects/) });
    expect(await call('fmt')).toEqual(ordinary);
  });

  it('a locale\'s maximize() and minimize() count, and a segmented text counts a unit per 40,960 characters', async () => {
    const call = await open();
    expect(await call('locale')).toEqual(['en-Latn-US', 'en', 3]);
    expect(await call('maximize', { n: 600 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 500 Intl objects/) });
    // 14 units each (573,440 characters): the 36th passes 500.
    expect(await call('long_segs', { n: 36, chars: 13 * 40960 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 500 Intl objects/) });
  });

  it('the call in which an isolate passes 500 in all is its last: the next call starts in a new one', async () => {
    const call = await open();
    const kept: unknown[] = [];
    for (let i = 0; i < 5; i += 1) kept.push(await call('hoard', { n: 200 }));
    expect(kept).toEqual([200, 400, 600, 200, 400]);
  });
});
