// A call is held to the host's bounds inside its realm, before anything is copied out: a
// plugin that logged or asked capabilities in a loop once queued gigabytes on its worker's
// thread (outside its heap), kept the thread that enforces its limits busy, and ended as a
// late TIMEOUT with no CPU counted, the worker replaced, and sometimes the whole sandbox
// process past its memory ceiling with its neighbours' calls in it.
import type { ToolResult } from '@airlock/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './support/plugin-harness.js';

type Metadata = { cpuMs?: number; logs?: unknown[]; logsDropped?: number; capabilityRequests?: number; capabilityBytesIn?: number };
const metadataOf = (result: ToolResult | undefined): Metadata => (result as unknown as { metadata?: Metadata }).metadata ?? {};
const codeOf = (result: ToolResult | undefined): string | undefined => (result !== undefined && result.isError ? result.error.code : undefined);

describe.each([['process' as const], ['in-process' as const]])('a call flooding the host, %s mode', (mode) => {
  let flood: Harness;
  beforeAll(async () => {
    flood = await harness('plugins/host-flood.js', { memoryMb: 16, cpuMs: 1000, timeoutMs: 5000 }, { ...(mode === 'in-process' ? { mode } : { processes: 1 }), manifest: { capabilities: ['log'] } });
  });
  afterAll(async () => flood?.close());

  it('with console lines, is stopped at its CPU limit and its dropped lines are counted', async () => {
    const { results: [result] } = await flood.call('console_flood', {}, 'flooder');
    expect(codeOf(result)).toBe('CPU_LIMIT');
    const metadata = metadataOf(result);
    expect(metadata.cpuMs).toBeGreaterThanOrEqual(1000);
    expect(metadata.logs?.length).toBeGreaterThan(0);
    expect(metadata.logsDropped).toBeGreaterThan(10_000);
  });

  it('with capability requests, sends no more than may wait at once, counts the rest, and is stopped by its own limits', async () => {
    const { results: [result] } = await flood.call('request_flood', {}, 'flooder');
    expect(['CPU_LIMIT', 'MEMORY_LIMIT']).toContain(codeOf(result));
    const metadata = metadataOf(result);
    const requestBytes = Buffer.byteLength(JSON.stringify({ level: 'info', message: 'x'.repeat(2000) }));
    expect(metadata.capabilityBytesIn).toBeLessThanOrEqual(16 * requestBytes);
    expect(metadata.capabilityRequests).toBeGreaterThan(1000);
  });

  it('leaves its neighbours served, console and all', async () => {
    const { results: [result] } = await flood.call('polite', {}, 'neighbour');
    expect(result?.isError).toBe(false);
    expect(metadataOf(result).logs).toEqual([{ level: 'info', message: 'still here' }]);
  });
});
