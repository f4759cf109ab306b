// A resizable ArrayBuffer (growable SharedArrayBuffer) reserves its maxByteLength of address
// space and commits memory as it grows, outside the allocator isolated-vm counts: a 16 MiB
// plugin grew one to 1.3 GiB in a warm realm until its sandbox process passed its ceiling,
// and 32,000 reservations of 4 GiB left the process no address space, so a neighbour's next
// allocation aborted it (and the neighbour was blamed). Only fixed-length buffers are offered.
import type { ToolFailure, ToolResult } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestSandbox } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const outcome = (result: ToolResult | undefined): unknown => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error : result.value);

describe('resizable buffers, whose memory a heap limit does not see', () => {
  it('cannot be made, by any route to the constructor; fixed-length buffers work as before', async () => {
    const opened = await openTestSandbox('hostile/resizable-buffers.js', { realm: 'warm', limits: { memoryMb: 16, cpuMs: 5000, timeoutMs: 20_000 } }, { threads: 1, processes: 1 });
    cleanups.push(opened.close);
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<unknown> => outcome((await opened.engine.run([{ id: 'c', name, arguments: JSON.stringify(args) }], { tenant: 't' }))[0]);
    // 64 MiB in a 16 MiB plugin: refused with a reason, not grown.
    expect(await call('grow', { mb: 64 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/resizable and growable buffers are not available/) });
    const refusal = expect.stringMatching(/^RangeError: ArrayBuffer: resizable/);
    expect(await call('routes')).toEqual({ subclass: refusal, reflect: refusal, viaPrototype: refusal, getterReadOnce: [false, 1] });
    expect(await call('fixed')).toEqual({ first: 7, resizable: false, sub: 3, ctor: true, name: 'ArrayBuffer', isView: true, big: 4 * 1048576 });
  });
});
