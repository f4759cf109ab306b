// The load run at CI size. By hand at full size (10,000 calls, 100 tenants):
//   npx pnpm@10 load
// which sets LOAD_CALLS and LOAD_TENANTS; the report is printed as JSON.
import { describe, expect, it } from 'vitest';
import { runLoad } from './load/run-load.js';

const calls = Number(process.env.LOAD_CALLS ?? 600);
const tenants = Number(process.env.LOAD_TENANTS ?? 20);

describe('load run', () => {
  it(`${calls} calls across ${tenants} tenants, 5% hostile: nothing lost, no wrong code, no cross-tenant observation`, async () => {
    const report = await runLoad({ calls, tenants, hostileRatio: 0.05 });
    process.stdout.write(`load report: ${JSON.stringify(report)}\n`);
    expect(report.mistakes).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.wrongCode).toBe(0);
    expect(report.crossTenant).toBe(0);
    expect(report.hostile).toBeGreaterThan(0);
  }, 30 * 60 * 1000);
});
