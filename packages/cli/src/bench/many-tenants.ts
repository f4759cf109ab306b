// Many tenants sharing one sandbox: 100 tenants each calling a warm plugin in turn, from two
// client loops at once (process mode, 2 threads), read against one tenant's warm call
// measured earlier in the run. Each worker keeps an isolate per tenant and plugin, up to
// its cap: what a call costs here is how often a tenant's call finds its isolate.
import { createEngine, type ToolCallRequest } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentileOf } from './measure.js';
import type { Emit } from './metrics.js';
import { SUM_ARGS_JSON, sumPlugin } from './sum-tool.js';

const TENANTS = 100;
const CLIENT_LOOPS = 2;
/** Rounds over every tenant before timing: each has called once, into an isolate of its own. */
const WARMUP_ROUNDS = 2;

/** `warmCallP50Us`: one tenant's warm call in process mode, measured earlier in this run (sandbox.warm_call). */
export async function benchManyTenants(quick: boolean, emit: Emit, progress: (label: string) => void, warmCallP50Us: number): Promise<void> {
  progress(`${TENANTS} tenants calling in turn from ${CLIENT_LOOPS} client loops`);
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-tenants-'));
  await writeFile(join(dir, 'index.js'), sumPlugin('tenants'));
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-tenants', module: './index.js', realm: 'warm' }));
  const sandbox = createSandbox({ threads: 2 });
  try {
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    const call: ToolCallRequest[] = [{ id: 'c', name: 'tenants_sum', arguments: SUM_ARGS_JSON }];
    const rounds = WARMUP_ROUNDS + (quick ? 2 : 6);
    const timesUs: number[] = [];
    // Loop k calls tenants k, k + CLIENT_LOOPS, ...: every tenant once per round.
    const loop = async (k: number): Promise<void> => {
      for (let round = 0; round < rounds; round += 1) {
        for (let tenant = k; tenant < TENANTS; tenant += CLIENT_LOOPS) {
          const started = performance.now();
          const [result] = await engine.run(call, { tenant: `tenant-${tenant}` });
          if (result === undefined || result.isError) throw new Error(`bench: a tenant's call failed (${result?.isError === true ? result.error.code : 'no result'})`);
          if (round >= WARMUP_ROUNDS) timesUs.push((performance.now() - started) * 1000);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENT_LOOPS }, (_, k) => loop(k)));
    const p50 = percentileOf(timesUs, 0.5);
    const note = `${TENANTS} tenants, a warm plugin, ${CLIENT_LOOPS} client loops at once, process mode, 2 threads (${timesUs.length} calls)`;
    emit('sandbox.many_tenants_call_p50', 'µs', p50, 'smaller', false, note);
    emit('sandbox.many_tenants_call_p99', 'µs', percentileOf(timesUs, 0.99), 'smaller', false);
    if (Number.isFinite(warmCallP50Us)) emit('sandbox.many_tenants_vs_warm_call', 'x', p50 / warmCallP50Us, 'smaller', false, "a call among 100 tenants / one tenant's warm call (sandbox.warm_call): what sharing the workers costs; 1.0 when every call finds its tenant's isolate");
  } finally {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}
