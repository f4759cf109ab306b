// Each pool worker keeps its own isolate per tenant and plugin, up to a cap: with more
// tenants in play than that, a tenant's call sent to a worker that has none starts cold there
// and evicts another tenant's. So then a tenant's call goes to the idle worker that ran its
// last one, whatever order tenants arrive in; a warm realm's counter shows whether the call
// found the isolate of the tenant's earlier calls.
import type { ToolResult } from '@airlock/core';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from './support/plugin-harness.js';

/** isolate/isolate-cap.ts keeps 32 isolates per worker. */
const MORE_TENANTS_THAN_A_WORKER_KEEPS = 40;

let opened: Harness | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

const value = ({ results }: { results: readonly ToolResult[] }): unknown => {
  const [result] = results;
  if (result === undefined || result.isError) throw new Error(`expected a value, got ${JSON.stringify(result)}`);
  return (result as unknown as { value: unknown }).value;
};

describe.each([['in-process' as const], ['process' as const]])('worker affinity, %s mode', (mode) => {
  it("with many tenants in play, sends a tenant's call to the worker holding its isolate, whichever tenant comes first", async () => {
    opened = await harness('plugins/count-spin.js', { cpuMs: 2000, timeoutMs: 5000 }, { ...(mode === 'in-process' ? { mode } : { processes: 1 }), manifest: { realm: 'warm' } });
    const { call } = opened;
    const count = (tenant: string, ms: number): Promise<unknown> => call('count', { ms }, tenant).then(value);
    /** Both tenants' calls at once, in this order: each spins long enough to keep its worker busy while the other's is dispatched. */
    const together = (first: string, second: string): Promise<unknown[]> => Promise.all([count(first, 50), count(second, 50)]);
    // Two workers up before the tenants under test come (a pool starts with one).
    await Promise.all([count('warm-up', 200), count('warm-up-too', 200)]);
    // More tenants in play than one worker keeps isolates for.
    for (let tenant = 0; tenant < MORE_TENANTS_THAN_A_WORKER_KEEPS; tenant += 1) await count(`crowd-${tenant}`, 0);
    expect(await together('a', 'b')).toEqual([1, 1]);
    // Arriving in the other order, each still finds its own isolate (the first idle worker
    // would be the one that ran the other tenant's call).
    expect(await together('b', 'a')).toEqual([2, 2]);
    expect(await together('a', 'b')).toEqual([3, 3]);
    expect(await together('b', 'a')).toEqual([4, 4]);
  });
});
