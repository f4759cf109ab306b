// With the webAssembly grant, a WebAssembly memory reserves about 10 GiB of address space and
// is a few bytes of heap: 13,000 of them from a 16 MiB warm plugin left its sandbox process
// (resident memory 100 MiB, so no ceiling saw it) no room for another tenant's memory, and 260
// compiled modules of 8 MiB took one past its ceiling. A realm may make 4 memories and
// instances (and compile 4 modules) in its whole life, whatever code makes them (a call, what
// it left to run after its answer, a classifier), and the host counts every realm it builds
// for such a plugin as 4 of them towards replacing the isolate: 128 of its 500 native units.
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
  it('a realm that makes more than 4 memories and instances fails with a reason, after its answer too; WebAssembly used the ordinary way is unchanged', async () => {
    const call = await open();
    const ordinary = { instance: true, memory: 65536, ctor: true, name: 'Memory' };
    expect(await call('ordinary')).toEqual(ordinary);
    // Two made above: two more fit in this realm, the fifth does not.
    expect(await call('hoard', { n: 2 })).toBe(2);
    expect(await call('hoard', { n: 1 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/realm made more than 4 memories and instances/) });
    // That failure dropped the realm. In the new one, memories made once the call answered count too.
    expect(await call('after', { n: 4 })).toBe('answered');
    expect(await call('hoard', { n: 1 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/more than 4/) });
    expect(await call('ordinary')).toEqual(ordinary);
    // Compiled modules hold their bytes and code outside the heap: 4 a realm, as well.
    expect(await call('modules', { n: 5 })).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringMatching(/realm made more than 4 modules/) });
  });

  it('each realm built for the plugin counts 128 native units: beside 373 Intl objects, the isolate is replaced', async () => {
    const call = await open();
    // One realm (128) and 300 Intl objects: 428 of 500. Then 73 more: 501, the isolate's last call.
    expect(await call('intl', { n: 300 })).toBe(300);
    expect(await call('intl', { n: 73 })).toBe(373);
    expect(await call('intl', { n: 1 })).toBe(1);
  });
});
