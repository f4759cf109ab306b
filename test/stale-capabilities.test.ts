// Every capability request belongs to one call: a warm realm that keeps an ended call's
// ctx.capabilities cannot ask through it from a later call. It once could, with each kept
// object's own budget (16 in flight, 1,000 in all): 48,000 requests copied out of one call,
// none answered, and the realm reused though they waited for ever.
import type { ToolResult } from '@airlock/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './support/plugin-harness.js';

const valueOf = (result: ToolResult | undefined): unknown => {
  if (result === undefined || result.isError) throw new Error(`expected a value, got ${JSON.stringify(result)}`);
  return (result as unknown as { value: unknown }).value;
};
const requestsOf = (result: ToolResult | undefined): number => (result as unknown as { metadata?: { capabilityRequests?: number } }).metadata?.capabilityRequests ?? 0;

describe.each([['process' as const], ['in-process' as const]])('capabilities kept from an ended call, %s mode', (mode) => {
  let plugin: Harness;
  beforeAll(async () => {
    // One thread: every call of the tenant reaches the same warm realm.
    plugin = await harness('plugins/stale-capabilities.js', { timeoutMs: 2000 }, { threads: 1, ...(mode === 'in-process' ? { mode } : { processes: 1 }), manifest: { realm: 'warm', capabilities: ['log'] } });
  });
  afterAll(async () => plugin?.close());

  it('are refused in the realm as unavailable, before anything is sent; the call\'s own still work', async () => {
    for (let i = 1; i <= 3; i += 1) expect(valueOf((await plugin.call('keep', {}, 'keeper')).results[0])).toEqual({ kept: i });
    const { results: [kept] } = await plugin.call('ask_through_kept', {}, 'keeper');
    expect(valueOf(kept)).toEqual({ ended: ['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'] });
    expect(requestsOf(kept)).toBe(0);
    const { results: [own] } = await plugin.call('ask_own', {}, 'keeper');
    expect(valueOf(own)).toEqual({ answered: true });
    expect(requestsOf(own)).toBe(1);
  });
});
