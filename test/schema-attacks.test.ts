// A plugin alone, through the real sandbox and engine, attacks the host's event loop
// with its own schemas (issue 11: 21 s for the pattern, 22 s for uniqueItems on plain
// ajv). The host's event-loop delay is measured while each call runs; the bound is a
// second, far above what the bounded validation needs (milliseconds, about 0.3 s for
// 40,000 rows) and far below what plain ajv takes.
import type { ToolFailure } from '@airlock/core';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './support/plugin-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness('plugins/schema-bombs.js', { timeoutMs: 10_000, cpuMs: 5_000, maxOutputBytes: 4 * 1024 * 1024 });
});
afterAll(async () => {
  await h.close();
});

/** Runs one call; returns its result and the longest the host's event loop was held meanwhile. */
async function blocked(tool: string, args = {}) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const { results } = await h.call(tool, args);
  delay.disable();
  return { result: results[0]!, heldMs: delay.max / 1e6 };
}

describe("a plugin's schemas never hold the host's event loop", () => {
  it('an output pattern ^(a+)+$ against a crafted 31-character result', async () => {
    const { result, heldMs } = await blocked('redos_output');
    expect((result as ToolFailure).error).toMatchObject({ code: 'INVALID_TOOL_OUTPUT', message: expect.stringContaining('/s: must match pattern "^(a+)+$"') });
    expect(heldMs).toBeLessThan(1000);
  });

  it('uniqueItems over 40,000 rows', async () => {
    const { result, heldMs } = await blocked('unique_rows');
    expect(result.isError).toBe(false);
    expect(heldMs).toBeLessThan(1000);
  });

  it('arguments against a 2^30 allOf/$ref fan-out', async () => {
    const { result, heldMs } = await blocked('fan_out', {});
    expect((result as ToolFailure).error).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('validation stopped') });
    expect(heldMs).toBeLessThan(1000);
  });
});
