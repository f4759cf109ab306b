// A warm realm is a cache of a tenant's healthy realm: after a call that failed (its own throw
// included) it is dropped, so what the failing call changed half way (a polluted prototype,
// a counter) never reaches the tenant's next call. An outside attacker's naive deep merge of
// its arguments wrote through constructor.prototype, threw, and the next call read the result.
import type { ToolFailure, ToolResult } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestSandbox } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const outcome = (result: ToolResult | undefined): unknown => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error.code : result.value);

describe('a warm realm after a failed call', () => {
  it('keeps its state across calls that succeed, and is dropped after one that failed', async () => {
    const opened = await openTestSandbox('plugins/warm-state.js', { realm: 'warm' }, { threads: 1, processes: 1 });
    cleanups.push(opened.close);
    const call = async (name: string): Promise<unknown> => outcome((await opened.engine.run([{ id: 'c', name, arguments: '{}' }], { tenant: 't' }))[0]);
    expect([await call('count'), await call('count')]).toEqual([1, 2]);
    expect(await call('half_done')).toBe('TOOL_ERROR');
    expect(await call('leftover')).toEqual({ calls: 0, leftover: null });
    expect(await call('count')).toBe(1);
  });
});
