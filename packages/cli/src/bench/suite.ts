// The benchmark suite: each measured figure sits beside the raw baseline it is read
// against, measured in the same run (direct call, raw Piscina round trip, raw isolated-vm).
import { createEngine, defineTool, type ToolCallRequest } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import ivm from '@airlock/sandbox/isolated-vm';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { measure, measureLoop } from './measure.js';
import { benchTenancy } from './tenancy.js';
import type { Metric } from './metrics.js';

export interface SuiteOptions {
  /** Smaller iteration counts, for CI smoke runs. */
  readonly quick: boolean;
  readonly onProgress?: (step: number, total: number, label: string) => void;
}

const NOOP_PLUGIN = `export default { tools: [
  { name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, isConcurrencySafe: () => true, execute: () => null },
  { name: 'noop_exclusive', description: 'Does nothing, alone.', parameters: { type: 'object', properties: {} }, execute: () => null },
] };`;

async function pluginDir(realm: 'fresh' | 'warm'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-'));
  await writeFile(join(dir, 'index.js'), NOOP_PLUGIN);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: `bench-${realm}`, module: './index.js', realm, limits: { cpuMs: 5000, timeoutMs: 10_000 } }));
  return dir;
}

const calls = (name: string, count: number): ToolCallRequest[] => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name, arguments: '{}' }));

export async function runSuite(options: SuiteOptions): Promise<Metric[]> {
  const scale = options.quick ? 0.1 : 1;
  const n = (count: number): number => Math.max(20, Math.round(count * scale));
  const metrics: Metric[] = [];
  const steps = 9;
  let step = 0;
  const progress = (label: string): void => {
    step += 1;
    options.onProgress?.(step, steps, label);
  };
  const metric = (name: string, unit: string, value: number, direction: Metric['direction'], ratio = false, extra?: string): void => {
    metrics.push({ name, unit, value, direction, ratio, ...(extra === undefined ? {} : { extra }) });
  };

  // 1. Trusted tools: the pipeline against a direct call.
  progress('trusted pipeline vs direct call');
  const noop = defineTool({ name: 'noop', description: 'no-op', parameters: { type: 'object', properties: {} }, execute: () => null, isConcurrencySafe: () => true });
  const noopExclusive = defineTool({ name: 'noop_exclusive', description: 'no-op', parameters: { type: 'object', properties: {} }, execute: () => null });
  const engine = createEngine({ tools: [noop, noopExclusive], policy: { default: 'allow' } });
  const exec = { callId: 'c', toolName: 'noop', signal: new AbortController().signal, tenant: undefined, setMetadata: () => undefined };
  const one = calls('noop', 1);
  const direct = await measureLoop(n(200_000), n(20_000), () => noop.execute({}, exec));
  const piped = await measureLoop(n(100_000), n(10_000), () => engine.run(one));
  metric('trusted.direct_call', 'µs/call', direct, 'smaller');
  metric('trusted.pipeline_call', 'µs/call', piped, 'smaller');
  metric('trusted.pipeline_overhead', 'µs/call', piped - direct, 'smaller', false, 'full pipeline minus a direct call, one call per turn');
  metric('trusted.pipeline_overhead_ratio', 'x', piped / direct, 'smaller', true);

  progress('trusted scheduler: parallel and exclusive batches');
  const parallel10 = calls('noop', 10);
  const exclusive10 = calls('noop_exclusive', 10);
  const par = await measureLoop(n(20_000), n(2000), () => engine.run(parallel10));
  const exc = await measureLoop(n(20_000), n(2000), () => engine.run(exclusive10));
  metric('trusted.parallel_batch10_per_call', 'µs/call', par / 10, 'smaller');
  metric('trusted.exclusive_batch10_per_call', 'µs/call', exc / 10, 'smaller');
  metric('trusted.parallel_throughput', 'calls/s', 1e6 / (par / 10), 'bigger');

  // 2. The raw pool baseline.
  progress('raw Piscina no-op round trip');
  const pool = new Piscina({ filename: new URL('./noop-worker.js', import.meta.url).href, minThreads: 1, maxThreads: 2, concurrentTasksPerWorker: 1 });
  const rawPiscina = await measure(n(5000), n(500), () => pool.run(null));
  await pool.destroy();
  metric('baseline.piscina_roundtrip', 'µs/call', rawPiscina.meanUs, 'smaller');

  // 3. Sandboxed calls: warm (isolate exists; fresh realm per call), in-process and in the child process.
  progress('sandboxed calls (in-process and child process)');
  const freshDir = await pluginDir('fresh');
  const warmDir = await pluginDir('warm');
  const results: Record<string, { meanUs: number; p50Us: number; p99Us: number }> = {};
  try {
    for (const mode of ['in-process', 'process'] as const) {
      const sandbox = createSandbox({ mode, threads: 2 });
      try {
        await sandbox.loadPlugins([freshDir]);
        const sandboxed = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
        const call = calls('noop_exclusive', 1);
        results[mode] = await measure(n(2000), n(200), () => sandboxed.run(call));
      } finally {
        await sandbox.close();
      }
    }
    const inProcess = results['in-process']!;
    const childProcess = results.process!;
    metric('sandbox.fresh_realm_call', 'µs/call', inProcess.meanUs, 'smaller', false, 'in-process pool, isolate warm, new realm per call');
    metric('sandbox.fresh_realm_call_p50', 'µs', inProcess.p50Us, 'smaller');
    metric('sandbox.fresh_realm_call_p99', 'µs', inProcess.p99Us, 'smaller');
    metric('sandbox.call_vs_piscina_ratio', 'x', inProcess.meanUs / rawPiscina.meanUs, 'smaller', true, 'warm sandboxed call through the pool / raw Piscina no-op round trip');
    metric('sandbox.child_process_call', 'µs/call', childProcess.meanUs, 'smaller', false, 'default mode: pool in a supervised child process');
    metric('sandbox.child_process_call_p99', 'µs', childProcess.p99Us, 'smaller');

    progress('sandboxed warm realm and parallel throughput');
    const sandbox = createSandbox({ mode: 'in-process', threads: 2 });
    try {
      await sandbox.loadPlugins([warmDir]);
      const warm = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
      const warmCall = await measure(n(2000), n(200), () => warm.run(calls('noop_exclusive', 1)));
      metric('sandbox.warm_realm_call', 'µs/call', warmCall.meanUs, 'smaller', false, 'realm reused per tenant (manifest "realm": "warm")');
      const batch = calls('noop', 10);
      const parallel = await measure(n(300), n(30), () => warm.run(batch));
      metric('sandbox.parallel_throughput', 'calls/s', 1e6 / (parallel.meanUs / 10), 'bigger', false, '10 concurrency-safe calls per turn, 2 threads');
    } finally {
      await sandbox.close();
    }

    // 4. Cold start: a new tenant's first call (new isolate, realm, compile) against raw isolated-vm.
    progress('cold start vs raw isolated-vm');
    const rawCold = await measure(n(200), n(20), async () => {
      const isolate = new ivm.Isolate({ memoryLimit: 64 });
      const context = await isolate.createContext();
      const module = await isolate.compileModule(NOOP_PLUGIN);
      await module.instantiate(context, () => {
        throw new Error('no imports');
      });
      await module.evaluate();
      isolate.dispose();
    });
    const cold = createSandbox({ mode: 'in-process', threads: 2 });
    try {
      await cold.loadPlugins([freshDir]);
      const coldEngine = createEngine({ sources: [cold], policy: { default: 'allow' } });
      let tenant = 0;
      const coldCall = await measure(n(200), n(20), () => coldEngine.run(calls('noop_exclusive', 1), { tenant: `t${(tenant += 1)}` }));
      metric('baseline.raw_isolate_start', 'µs', rawCold.meanUs, 'smaller', false, 'isolate + context + compile + evaluate');
      metric('sandbox.cold_tenant_call', 'µs', coldCall.meanUs, 'smaller', false, 'first call of a new tenant: isolate, realm, compile, call');
      metric('sandbox.cold_vs_raw_isolate_ratio', 'x', coldCall.meanUs / rawCold.meanUs, 'smaller', true);
    } finally {
      await cold.close();
    }

    progress('cold plugin load');
    const load = await measure(n(50), n(5), async () => {
      const sandbox = createSandbox({ mode: 'in-process', threads: 1 });
      await sandbox.loadPlugins([freshDir]);
      await sandbox.close();
    });
    metric('sandbox.plugin_load', 'ms', load.meanUs / 1000, 'smaller', false, 'new sandbox, manifest check, describe in a throwaway isolate');
  } finally {
    await rm(freshDir, { recursive: true, force: true });
    await rm(warmDir, { recursive: true, force: true });
  }

  // 5. Tenancy: work conservation and fair share, each against raw Piscina.
  await benchTenancy(options.quick, metric, progress);
  return metrics;
}
