// The remote load run at CI size: 3 executor processes on a real nats-server, 20 tenants,
// 5% hostile calls, one executor SIGKILLed a third of the way and one drained at two thirds.
// By hand at full size, with the throughput run for 1, 2 and 3 executors:
//   npx pnpm@10 load:remote
// (REMOTE_LOAD_CALLS, REMOTE_LOAD_TENANTS, REMOTE_LOAD_THROUGHPUT=1; see docs/load.md).
import { describe, expect, it } from 'vitest';
import { runNatsRate, runRemoteLoad, runRemoteThroughput } from './load/run-remote-load.js';
import { natsAvailable } from './support/nats.js';

const calls = Number(process.env.REMOTE_LOAD_CALLS ?? 300);
const tenants = Number(process.env.REMOTE_LOAD_TENANTS ?? 20);
const throughput = process.env.REMOTE_LOAD_THROUGHPUT === '1';

describe.skipIf(!natsAvailable())('remote load run (real nats-server)', () => {
  it(`${calls} calls across ${tenants} tenants on 3 executors, 5% hostile, one executor killed and one drained mid-run: none lost, none run twice`, async () => {
    const report = await runRemoteLoad({ calls, tenants, hostileRatio: 0.05, executors: 3, faults: true });
    process.stdout.write(`remote load report: ${JSON.stringify(report)}\n`);
    expect(report.mistakes).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.ranTwice).toBe(0);
    expect(report.notRunMismatch).toBe(0);
    expect(report.wrongCode).toBe(0);
    expect(report.crossTenant).toBe(0);
    expect(report.hostile).toBeGreaterThan(0);
    expect(report.drainedExitCode).toBe(0);
    // Only calls in flight on the killed executor may crash: at most its capacity (4 slots + 1 reserve).
    expect(report.crashedByKill).toBeLessThanOrEqual(5);
    expect(report.phases.afterDrain.calls).toBeGreaterThan(0);
  }, 30 * 60 * 1000);

  it.runIf(throughput)('throughput with 1, 2 and 3 executors on I/O-bound calls', async () => {
    const rows = [];
    // Each call waits 250 ms on the host, and an executor runs 5 at once (4 slots + 1 reserve):
    // about 20 calls/s per executor, so the executors, not this 2-core machine, set the pace.
    const settings = { calls: Number(process.env.REMOTE_THROUGHPUT_CALLS ?? 600), ioMs: Number(process.env.REMOTE_THROUGHPUT_IO_MS ?? 250), slots: 4, inFlight: 64 };
    for (const executors of [1, 2, 3]) rows.push(await runRemoteThroughput(executors, settings));
    process.stdout.write(`remote throughput: ${JSON.stringify(rows)}\n`);
    process.stdout.write(`nats request-reply: ${JSON.stringify(await runNatsRate())}\n`);
    for (const row of rows) expect(row.lost).toBe(0);
  }, 30 * 60 * 1000);
});
