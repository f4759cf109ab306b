// With the webAssembly grant, a WebAssembly memory reserves about 10 GiB of address space and
// is a few bytes of heap: 13,000 of them from a 16 MiB warm plugin left its sandbox process
// (resident memory 100 MiB, so no ceiling saw it) no room for another tenant's memory. A call
// may make 8 memories and instances, and an isolate whose realms made 16 in all is replaced.
import type { ToolFailure, ToolResult } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestSandbox } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const outcome = (result: ToolResult | undefined): unknown => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error : result.value);

async function open(): Promise<(name: string, args?: Record<string, unknown>) => Promise<unknown>> {
  const opened = await openTestSandbox('hostile/wasm-reservations.js', { realm: 'warm', grants: { webAssembly: true }, limits: { memoryMb: 16 } }, { threads: 1, processes: 1 });
  cleanups.push(opened.close);
  return async (name, args = {}) => outcome((await opened.engine.run([{ id: 'c', name, arguments: JSON.stringify(args) }], { tenant: 't' }))[0]);
}

describe('WebAssembly address space a heap limit does not see', () => {
  it('a call that makes more than 8 memories and instances fails with a reason; WebAssembly used the ordinary way is unchanged', async () => {
    const call = await open();
    const ordinary = { instance: true, memory: 65536, ctor: true, name: 'Memory' };
    expect(await call('ordinary')).toEqual(ordinary);
    expect(await call('hoard', { n: 9 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 8 memories and instances/) });
    expect(await call('ordinary')).toEqual(ordinary);
  });

  it('the call in which an isolate passes 16 in all is its last: the next call starts in a new one', async () => {
    const call = await open();
    const kept: unknown[] = [];
    for (let i = 0; i < 5; i += 1) kept.push(await call('hoard', { n: 6 }));
    expect(kept).toEqual([6, 12, 18, 6, 12]);
  });
});
