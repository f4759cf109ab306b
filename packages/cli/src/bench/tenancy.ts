// Tenancy figures, each read against raw Piscina measured in the same run:
// - one tenant's CPU-bound throughput on 2 threads against 1 (work conservation), beside
//   raw Piscina's own 2-vs-1 ratio;
// - a light tenant's p99 latency beside a hog that floods the pool, against its p99 alone,
//   beside the same figure for raw Piscina's first-come-first-served queue.
import { createEngine, type Engine, type ToolCallRequest } from '@airlock/core';
import { createSandbox, type SandboxOptions } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { measure, median, ROUNDS } from './measure.js';
import type { Emit } from './metrics.js';
import spin from './spin-worker.js';

// The loop is the work: CPU time, not wall-clock waiting, so contention shows in latency.
const SPIN_PLUGIN = `function spin(n) { let x = 0; for (let i = 0; i < n; i += 1) x = (x * 31 + i) | 0; return x; }
export default { tools: [
  { name: 'spin', description: 'CPU-bound work.', parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, execute: ({ n }) => spin(n) },
] };`;

/** Loop iterations for about `ms` of CPU on this machine (calibrated once per run, with the same loop). */
function calibrate(): (ms: number) => number {
  const probe = 20_000_000;
  spin(probe / 10); // let the loop be optimised before it is timed
  const started = performance.now();
  spin(probe);
  const perMs = probe / Math.max(1, performance.now() - started);
  return (ms) => Math.max(1000, Math.round(perMs * ms));
}

const spinCall = (id: string, n: number): ToolCallRequest[] => [{ id, name: 'spin', arguments: JSON.stringify({ n }) }];

/** A sandbox with the bench plugin loaded, and an engine over it. */
async function openSandbox(dir: string, options: SandboxOptions): Promise<{ engine: Engine; close: () => Promise<void> }> {
  const sandbox = createSandbox(options);
  try {
    await sandbox.loadPlugins([dir]);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return { engine: createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } }), close: () => sandbox.close() };
}

/** Calls per second for `count` calls submitted at once. */
async function throughput(count: number, submit: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, (_, i) => submit(i)));
  return count / ((performance.now() - started) / 1000);
}

/** Keeps `inFlight` hog calls running until stopped. */
function flood(submit: () => Promise<unknown>, inFlight: number): () => Promise<void> {
  let stopped = false;
  const loops = Array.from({ length: inFlight }, async () => {
    while (!stopped) await submit();
  });
  return async () => {
    stopped = true;
    await Promise.all(loops);
  };
}

export async function benchTenancy(quick: boolean, emit: Emit, progress: (label: string) => void): Promise<void> {
  const iterations = calibrate();
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-tenancy-'));
  await writeFile(join(dir, 'index.js'), SPIN_PLUGIN);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-spin', module: './index.js', limits: { cpuMs: 10_000, timeoutMs: 30_000 } }));
  try {
    progress('one tenant on 2 threads vs 1 (CPU-bound), beside raw Piscina');
    // Rounds alternate the four set-ups, so load from outside hits them alike; medians of the ratios.
    const count = quick ? 8 : 40;
    const rounds = ROUNDS;
    const workMs = quick ? 10 : 20;
    const work = iterations(workMs);
    const worker = new URL('./spin-worker.js', import.meta.url).href;
    const sandboxes = [await openSandbox(dir, { threads: 1, processes: 1 }), await openSandbox(dir, { threads: 2, processes: 1 })] as const;
    const pools = [1, 2].map((threads) => new Piscina({ filename: worker, minThreads: threads, maxThreads: threads, concurrentTasksPerWorker: 1 }));
    try {
      const viaSandbox = (index: 0 | 1) => (i: number) => sandboxes[index].engine.run(spinCall(`c${i}`, work), { tenant: 'solo' });
      const viaPool = (index: 0 | 1) => () => (pools[index] as Piscina).run(work);
      for (const index of [0, 1] as const) {
        await throughput(4, viaSandbox(index));
        await throughput(4, viaPool(index));
      }
      const ours: number[] = [];
      const raw: number[] = [];
      for (let round = 0; round < rounds; round += 1) {
        const one = await throughput(count, viaSandbox(0));
        const two = await throughput(count, viaSandbox(1));
        const rawOne = await throughput(count, viaPool(0));
        const rawTwo = await throughput(count, viaPool(1));
        ours.push(two / one);
        raw.push(rawTwo / rawOne);
      }
      emit('tenancy.one_tenant_2v1_threads', 'x', median(ours), 'bigger', false, `one tenant, ${count} CPU-bound calls of ~${workMs} ms at once: calls/s on 2 threads / on 1 (median of ${rounds})`);
      emit('baseline.piscina_2v1_threads', 'x', median(raw), 'bigger', false, 'the same work on raw Piscina, 2 threads / 1');
      const perRound = ours.map((value, index) => value / (raw[index] as number));
      emit('tenancy.one_tenant_2v1_vs_piscina_ratio', 'x', median(perRound), 'bigger', true, `how much of raw Piscina's parallel speedup one tenant gets (1.0 = all of it; median of ${rounds} rounds)`, perRound);
    } finally {
      for (const sandbox of sandboxes) await sandbox.close();
      for (const pool of pools) await pool.destroy();
    }

    progress('light tenant beside a hog flooding the pool, beside raw Piscina FIFO');
    const lightCalls = quick ? 15 : 200;
    const light = iterations(2);
    const hogMs = quick ? 20 : 50;
    const hog = iterations(hogMs);
    const crowdedSandbox = await openSandbox(dir, { threads: 2, processes: 1 });
    const alone: number[] = [];
    const crowded: number[] = [];
    try {
      const { engine } = crowdedSandbox;
      let id = 0;
      const lightCall = (): Promise<unknown> => engine.run(spinCall(`l${(id += 1)}`, light), { tenant: 'light' });
      // Rounds of alone-then-crowded; the ratio is the median of the per-round ratios.
      for (let round = 0; round < ROUNDS; round += 1) {
        alone.push((await measure(lightCalls, 5, lightCall)).p99Us);
        const stop = flood(() => engine.run(spinCall(`h${(id += 1)}`, hog), { tenant: 'hog' }), 12);
        try {
          crowded.push((await measure(lightCalls, 5, lightCall)).p99Us);
        } finally {
          await stop();
        }
      }
    } finally {
      await crowdedSandbox.close();
    }
    emit('tenancy.light_p99_alone', 'µs', median(alone), 'smaller', false, `a light tenant's ~2 ms calls, one at a time, idle pool of 2 threads (median of ${ROUNDS} rounds)`);
    emit('tenancy.light_p99_beside_hog', 'µs', median(crowded), 'smaller', false, `the same, while a hog keeps 12 calls of ~${hogMs} ms in flight`);
    const perRound = crowded.map((value, index) => value / (alone[index] as number));
    emit('tenancy.light_p99_beside_hog_ratio', 'x', median(perRound), 'smaller', true, `p99 beside the hog / p99 alone (median of ${ROUNDS} rounds; goal at most 2)`, perRound);

    // Once, and few calls: behind a FIFO queue each light call waits for the hog's backlog.
    const rawCalls = quick ? 5 : 50;
    const pool = new Piscina({ filename: new URL('./spin-worker.js', import.meta.url).href, minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 1 });
    try {
      const rawAlone = await measure(rawCalls, 5, () => pool.run(light));
      const stop = flood(() => pool.run(hog), 12);
      let rawCrowded;
      try {
        rawCrowded = await measure(rawCalls, 5, () => pool.run(light));
      } finally {
        await stop();
      }
      emit('baseline.piscina_fifo_light_p99_beside_hog_ratio', 'x', rawCrowded.p99Us / rawAlone.p99Us, 'smaller', false, 'the same on raw Piscina: one first-come-first-served queue, no fair share');
    } finally {
      await pool.destroy();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
