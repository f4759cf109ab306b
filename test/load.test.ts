// The load run at CI size. By hand at full size (10,000 calls, 100 tenants):
//   npx pnpm@10 load
// which sets LOAD_CALLS and LOAD_TENANTS; the report is printed as JSON.
import { describe, expect, it } from 'vitest';
import { runLoad } from './load/run-load.js';

const calls = Number(process.env.LOAD_CALLS ?? 600);
const tenants = Number(process.env.LOAD_TENANTS ?? 20);
// One tenant's calls abort their sandbox process: about one per 100 other calls, at least 6.
const abortCalls = Number(process.env.LOAD_ABORTS ?? Math.max(6, Math.round(calls / 100)));
// CI kills the process by fault injection (deterministic); `npx pnpm@10 load` uses real V8 aborts.
const abortWith = process.env.LOAD_ABORT_WITH === 'v8' ? 'v8' : 'fault';

describe('load run', () => {
  it(`${calls} calls across ${tenants} tenants, 5% hostile, ${abortCalls} process aborts (${abortWith}) by one more tenant: nothing lost, no wrong code, no cross-tenant observation; aborts cost only their shard, and nothing once quarantined`, async () => {
    const report = await runLoad({ calls, tenants, hostileRatio: 0.05, abortCalls, abortWith });
    process.stdout.write(`load report: ${JSON.stringify(report)}\n`);
    expect(report.mistakes).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.wrongCode).toBe(0);
    expect(report.crossTenant).toBe(0);
    expect(report.hostile).toBeGreaterThan(0);
    const aborts = report.aborts!;
    expect(aborts.quarantined).toBeGreaterThan(0);
    expect(aborts.othersLostAfterQuarantine).toBe(0);
    expect(aborts.otherShards.lost).toBe(0);
    // Each abort costs at most the other calls admitted to its process: 2 threads + 1 reserve, less its own.
    expect(aborts.othersLost).toBeLessThanOrEqual(2 * aborts.processAborts);
  }, 30 * 60 * 1000);
});
