// The benchmark suite: each measured figure sits beside the raw baseline it is read
// against, measured in the same run and in interleaved rounds (so a noisy neighbour hits
// both alike); ratios are medians over rounds of per-round p50 ratios.
import { createEngine, defineTool, type Engine, type ToolCallRequest } from '@airlock/core';
import { createSandbox, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { block, median, Rounds, ROUNDS, type Subject } from './measure.js';
import type { Emit, Metric } from './metrics.js';
import { openPeers, peerSubjects } from './peers.js';
import { SUM_ARGS_JSON, sumPlugin, webGlobalsSumPlugin } from './sum-tool.js';
import { CAPABILITY_NAME, CAPABILITY_PLUGIN, capabilityArgs, directContext, hostSum, REQUESTS_PER_CALL } from './capability-tool.js';
import { benchTenancy } from './tenancy.js';
import { benchCodeMode } from './code-mode.js';
import { benchKills } from './kills.js';
import { benchManyTenants } from './many-tenants.js';
import { benchRemote } from './remote.js';

export interface SuiteOptions {
  /** Smaller iteration counts, for CI smoke runs. */
  readonly quick: boolean;
  readonly onProgress?: (step: number, total: number, label: string) => void;
}

const DIRECT = { name: 'trusted.direct_call', label: 'a direct call' };

const calls = (name: string, count: number, args = '{}'): ToolCallRequest[] => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name, arguments: args }));

/** What a bundled plugin carries beside its tools (its dependencies): the large plugin's extra bytes. */
const LARGE_PLUGIN_BYTES = 256 * 1024;

/**
 * How long the workers are idle before a new tenant's call in `sandbox.cold_tenant_call_idle_worker`:
 * enough for a worker to build the next tenant's isolate and realm (5 ms of idleness, then
 * about 6 ms of building), as between a model's turns, which take seconds.
 */
const IDLE_WORKER_MS = 40;

/** The sum tool as `<name>_sum` in a plugin of that realm, with `paddingBytes` of data in its module (or as `module` makes it). */
async function pluginDir(realm: 'fresh' | 'warm', name: string = realm, paddingBytes = 0, module = sumPlugin): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-'));
  const padding = paddingBytes > 0 ? `\nexport const bundled = ${JSON.stringify('x'.repeat(paddingBytes))};\n` : '';
  await writeFile(join(dir, 'index.js'), module(name) + padding);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: `bench-${name}`, module: './index.js', realm, limits: { cpuMs: 5000, timeoutMs: 10_000 } }));
  return dir;
}

async function capabilityPluginDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-'));
  await writeFile(join(dir, 'index.js'), CAPABILITY_PLUGIN);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-capability', module: './index.js', realm: 'warm', capabilities: [CAPABILITY_NAME], limits: { cpuMs: 5000, timeoutMs: 10_000 } }));
  return dir;
}

async function openSandbox(dirs: readonly string[], options: SandboxOptions, preSchedule = true): Promise<{ sandbox: Sandbox; engine: Engine }> {
  const sandbox = createSandbox(options);
  try {
    await sandbox.loadPlugins(dirs);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return { sandbox, engine: createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, ...(preSchedule ? { preSchedule: sandbox.preSchedule } : {}) }) };
}

/** p50 and p99 of one subject, the p50 also read against raw Piscina's no-op round trip (or `against`; null: against nothing). */
function emitLatency(emit: Emit, rounds: Rounds, name: string, what: string, against: { name: string; label: string } | null = { name: 'baseline.piscina_noop', label: 'raw Piscina no-op' }): void {
  const latency = rounds.latency(name);
  const versus = against === null || name === against.name ? '' : `; ${rounds.ratio(name, against.name).toFixed(2)}x ${against.label}`;
  emit(`${name}_p50`, 'µs', latency.p50Us, 'smaller', false, `${what}${versus}`);
  emit(`${name}_p99`, 'µs', latency.p99Us, 'smaller', false);
}

export async function runSuite(options: SuiteOptions): Promise<Metric[]> {
  const count = (iterations: number): number => (options.quick ? Math.max(10, Math.round(iterations / 10)) : iterations);
  const metrics: Metric[] = [];
  const steps = 9;
  let step = 0;
  const progress = (label: string): void => {
    step += 1;
    options.onProgress?.(step, steps, label);
  };
  const emit: Emit = (name, unit, value, direction, ratio = false, extra, rounds) => {
    metrics.push({ name, unit, value, direction, ratio, ...(extra === undefined ? {} : { extra }), ...(rounds === undefined ? {} : { rounds }) });
  };
  /**
   * A ratio: the median of its per-round values, which travel with it. Gated, and kept by
   * `--metrics ratios`, unless `gated` is false: one raw baseline against another, which no
   * code of Airlock's moves, only noise; or a ratio whose baseline jumps between runs.
   */
  const emitRatio = (name: string, rounds: Rounds, numerator: string, denominator: string, direction: Metric['direction'], extra: string, gated = true): void => {
    const perRound = rounds.ratios(numerator, denominator);
    emit(name, 'x', median(perRound), direction, gated, `${extra} (p50s, median of ${perRound.length} rounds${gated ? '' : '; not gated by default'})`, perRound);
  };

  // 1. Trusted tools: the pipeline against a direct call. Sub-µs bodies are timed in blocks.
  progress('trusted pipeline vs direct call');
  const noop = defineTool({ name: 'noop', description: 'no-op', parameters: { type: 'object', properties: {} }, execute: () => null, isConcurrencySafe: () => true });
  const noopExclusive = defineTool({ name: 'noop_exclusive', description: 'no-op', parameters: { type: 'object', properties: {} }, execute: () => null });
  const engine = createEngine({ tools: [noop, noopExclusive], policy: { default: 'allow' } });
  const exec = { callId: 'c', toolName: 'noop', signal: new AbortController().signal, tenant: undefined, setMetadata: () => undefined };
  const one = calls('noop', 1);
  const parallel10 = calls('noop', 10);
  const exclusive10 = calls('noop_exclusive', 10);
  const trusted = await Rounds.run([
    { name: 'trusted.direct_call', iterations: count(2000), warmup: count(200), callsPerIteration: 100, body: block(100, () => noop.execute({}, exec)) },
    { name: 'trusted.pipeline_call', iterations: count(2000), warmup: count(200), callsPerIteration: 10, body: block(10, () => engine.run(one)) },
    { name: 'trusted.parallel_batch10_per_call', iterations: count(2000), warmup: count(200), callsPerIteration: 10, body: () => engine.run(parallel10) },
    { name: 'trusted.exclusive_batch10_per_call', iterations: count(2000), warmup: count(200), callsPerIteration: 10, body: () => engine.run(exclusive10) },
  ], ROUNDS);
  const blockNote = (size: number): string => `per call, timed in blocks of ${size}`;
  emitLatency(emit, trusted, 'trusted.direct_call', `the tool body called directly, ${blockNote(100)}`, DIRECT);
  emitLatency(emit, trusted, 'trusted.pipeline_call', `full pipeline, one call per turn, ${blockNote(10)}`, DIRECT);
  emitRatio('trusted.pipeline_overhead_ratio', trusted, 'trusted.pipeline_call', 'trusted.direct_call', 'smaller', 'pipeline call / direct call');
  emitLatency(emit, trusted, 'trusted.parallel_batch10_per_call', '10 concurrency-safe calls per turn, per call', DIRECT);
  emitLatency(emit, trusted, 'trusted.exclusive_batch10_per_call', '10 exclusive calls per turn, per call', DIRECT);
  emit('trusted.parallel_throughput', 'calls/s', 1e6 / trusted.latency('trusted.parallel_batch10_per_call').p50Us, 'bigger');

  /** A new tenant's first call, read again by the kills below: what a cold start costs in this run. */
  let coldTenantP50Us = Number.NaN;
  /** One tenant's warm call, process mode, read again beside many tenants below. */
  let warmCallP50Us = Number.NaN;

  // 2. Sandboxed calls beside every peer, all in one set of interleaved rounds.
  progress('sandboxed calls beside raw Piscina, isolated-vm and QuickJS');
  const freshDir = await pluginDir('fresh');
  const warmDir = await pluginDir('warm');
  const largeDir = await pluginDir('warm', 'large', LARGE_PLUGIN_BYTES);
  const webDir = await pluginDir('fresh', 'web', 0, webGlobalsSumPlugin);
  const capabilityDir = await capabilityPluginDir();
  const opened: Sandbox[] = [];
  const peers = await openPeers();
  try {
    // threads: 2 (plus the reserve thread), the same two threads the raw pools get.
    const capabilities = { [CAPABILITY_NAME]: hostSum };
    const processMode = await openSandbox([freshDir, warmDir, largeDir, capabilityDir], { threads: 2, capabilities });
    opened.push(processMode.sandbox);
    const inProcess = await openSandbox([freshDir, warmDir, capabilityDir], { mode: 'in-process', threads: 2, capabilities });
    opened.push(inProcess.sandbox);
    const cold = await openSandbox([freshDir, webDir], { mode: 'in-process', threads: 2 }, false);
    opened.push(cold.sandbox);
    const warmCall = calls('warm_sum', 1, SUM_ARGS_JSON);
    const largeCall = calls('large_sum', 1, SUM_ARGS_JSON);
    const freshCall = calls('fresh_sum', 1, SUM_ARGS_JSON);
    const webCall = calls('web_sum', 1, SUM_ARGS_JSON);
    const batch10 = calls('warm_sum', 10, SUM_ARGS_JSON);
    const askNone = calls('cap_sum', 1, capabilityArgs(0));
    const askMany = calls('cap_sum', 1, capabilityArgs(REQUESTS_PER_CALL));
    const sumArgs = { a: 20, b: 22 };
    let tenant = 0;
    const subjects: Subject[] = [
      ...peerSubjects(peers, count),
      { name: 'sandbox.warm_call', iterations: count(500), warmup: count(50), body: () => processMode.engine.run(warmCall) },
      { name: 'sandbox.warm_call_in_process', iterations: count(500), warmup: count(50), body: () => inProcess.engine.run(warmCall) },
      { name: 'sandbox.warm_call_large_plugin', iterations: count(500), warmup: count(50), body: () => processMode.engine.run(largeCall) },
      { name: 'sandbox.fresh_call', iterations: count(300), warmup: count(30), body: () => processMode.engine.run(freshCall) },
      { name: 'sandbox.fresh_call_in_process', iterations: count(300), warmup: count(30), body: () => inProcess.engine.run(freshCall) },
      { name: 'baseline.piscina_ivm_batch10', iterations: count(200), warmup: count(20), body: peers.piscinaIvmBatch10 },
      { name: 'baseline.piscina_ivm_async_batch10', iterations: count(200), warmup: count(20), body: peers.piscinaIvmAsyncBatch10 },
      { name: 'baseline.process_piscina_ivm_async_batch10', iterations: count(200), warmup: count(20), body: peers.processPiscinaIvmAsyncBatch10 },
      { name: 'sandbox.batch10', iterations: count(200), warmup: count(20), body: () => processMode.engine.run(batch10) },
      { name: 'baseline.ivm_new_isolate', iterations: count(100), warmup: count(10), body: peers.ivmNewIsolate },
      { name: 'sandbox.cold_tenant_call', iterations: count(100), warmup: count(10), body: () => cold.engine.run(freshCall, { tenant: `t${(tenant += 1)}` }) },
      { name: 'sandbox.cold_tenant_call_idle_worker', iterations: count(50), warmup: count(5), idleBeforeMs: IDLE_WORKER_MS, body: () => cold.engine.run(freshCall, { tenant: `t${(tenant += 1)}` }) },
      { name: 'sandbox.cold_tenant_call_web_globals', iterations: count(100), warmup: count(10), body: () => cold.engine.run(webCall, { tenant: `t${(tenant += 1)}` }) },
      { name: 'trusted.capability_direct', iterations: count(500), warmup: count(50), callsPerIteration: 100, body: block(100, () => hostSum(sumArgs, directContext)) },
      { name: 'sandbox.capability_none', iterations: count(300), warmup: count(30), body: () => processMode.engine.run(askNone) },
      { name: 'sandbox.capability_many', iterations: count(300), warmup: count(30), body: () => processMode.engine.run(askMany) },
      { name: 'sandbox.capability_none_in_process', iterations: count(300), warmup: count(30), body: () => inProcess.engine.run(askNone) },
      { name: 'sandbox.capability_many_in_process', iterations: count(300), warmup: count(30), body: () => inProcess.engine.run(askMany) },
    ];
    const rounds = await Rounds.run(subjects, ROUNDS);

    emitLatency(emit, rounds, 'baseline.piscina_noop', 'raw Piscina no-op round trip, 2 threads');
    emitLatency(emit, rounds, 'baseline.piscina_ivm_warm', 'raw Piscina + a warm isolated-vm context per worker, applySync');
    emitLatency(emit, rounds, 'baseline.piscina_ivm_async_warm', 'the same raw pool calling in with the asynchronous apply and a timeout, as untrusted code needs');
    emitLatency(emit, rounds, 'baseline.process_piscina_ivm_warm', 'the same raw pool in a child process, one IPC round trip per call');
    emitLatency(emit, rounds, 'baseline.process_piscina_ivm_async_warm', 'the raw pool behind the process boundary, asynchronous apply: both kept, nothing of Airlock');
    emitLatency(emit, rounds, 'baseline.ivm_new_context', 'raw isolated-vm: new context + module + call in a warm isolate, this thread');
    emitLatency(emit, rounds, 'peer.quickjs_warm', 'quickjs-emscripten: a call into a warm context, this thread');
    emitLatency(emit, rounds, 'peer.quickjs_fresh', 'quickjs-emscripten: new runtime + context, evaluate, call, this thread');
    emitLatency(emit, rounds, 'sandbox.warm_call', 'Airlock warm realm, default process mode');
    emitLatency(emit, rounds, 'sandbox.warm_call_in_process', 'Airlock warm realm, in-process mode');
    emitLatency(emit, rounds, 'sandbox.warm_call_large_plugin', `Airlock warm realm, process mode, a plugin module of ${LARGE_PLUGIN_BYTES / 1024} KiB (a bundle)`);
    emitLatency(emit, rounds, 'sandbox.fresh_call', 'Airlock fresh realm (the default), default process mode');
    emitLatency(emit, rounds, 'sandbox.fresh_call_in_process', 'Airlock fresh realm, in-process mode');
    emitRatio('sandbox.warm_call_vs_piscina_ratio', rounds, 'sandbox.warm_call', 'baseline.piscina_noop', 'smaller', 'warm-realm call, process mode / raw Piscina no-op; its baseline jumps between runs on small VMs', false);
    emitRatio('sandbox.warm_call_vs_piscina_ivm_ratio', rounds, 'sandbox.warm_call', 'baseline.piscina_ivm_warm', 'smaller', 'warm-realm call, process mode / raw Piscina + warm isolated-vm; goal at most 2; its baseline jumps between runs on small VMs', false);
    emitRatio('baseline.piscina_ivm_async_vs_sync', rounds, 'baseline.piscina_ivm_async_warm', 'baseline.piscina_ivm_warm', 'smaller', "raw pool, asynchronous apply / applySync: what the only safe way into an isolate costs a warm call; the floor of sandbox.warm_call_vs_piscina_ivm_ratio", false);
    emitRatio('baseline.process_piscina_ivm_async_vs_piscina_ivm', rounds, 'baseline.process_piscina_ivm_async_warm', 'baseline.piscina_ivm_warm', 'smaller', 'the raw pool behind the process boundary with the asynchronous apply / in this process with applySync: the floor of sandbox.warm_call_vs_piscina_ivm_ratio for any sandbox that keeps both', false);
    emitRatio('sandbox.warm_call_vs_process_piscina_ivm_ratio', rounds, 'sandbox.warm_call', 'baseline.process_piscina_ivm_warm', 'smaller', 'warm-realm call, process mode / the raw pool behind the same process boundary');
    emitRatio('sandbox.warm_call_large_plugin_vs_warm_call_ratio', rounds, 'sandbox.warm_call_large_plugin', 'sandbox.warm_call', 'smaller', "the large plugin's warm call / the small one's: what a plugin's size costs every call (about 1: nothing)");
    emitRatio('sandbox.fresh_call_vs_new_context_ratio', rounds, 'sandbox.fresh_call', 'baseline.ivm_new_context', 'smaller', 'fresh-realm call, process mode / raw new context + module + call; goal at most 1.3');

    emitLatency(emit, rounds, 'baseline.piscina_ivm_batch10', '10 sum calls submitted at once to raw Piscina + isolated-vm, 2 threads', null);
    emitLatency(emit, rounds, 'sandbox.batch10', 'a turn of 10 concurrency-safe calls, one tenant, warm realm, process mode, 2 threads', null);
    emit('sandbox.parallel_throughput', 'calls/s', 10e6 / rounds.latency('sandbox.batch10').p50Us, 'bigger', false, 'turns of 10 concurrency-safe calls on 2 threads, from the p50 turn');
    emitLatency(emit, rounds, 'baseline.piscina_ivm_async_batch10', 'the same 10 calls with the asynchronous apply and a timeout, as untrusted code needs', null);
    emitRatio('baseline.piscina_ivm_async_batch10_vs_sync', rounds, 'baseline.piscina_ivm_batch10', 'baseline.piscina_ivm_async_batch10', 'bigger', "raw pool's 10-task throughput, asynchronous apply / applySync: the ceiling of sandbox.batch10_vs_piscina_ivm_ratio", false);
    emitLatency(emit, rounds, 'baseline.process_piscina_ivm_async_batch10', 'the same 10 calls behind the process boundary, one IPC message each way, asynchronous apply', null);
    emitRatio('baseline.process_piscina_ivm_async_batch10_vs_piscina_ivm', rounds, 'baseline.piscina_ivm_batch10', 'baseline.process_piscina_ivm_async_batch10', 'bigger', "that raw pool's 10-task throughput / in this process with applySync: the ceiling of sandbox.batch10_vs_piscina_ivm_ratio for any sandbox that keeps both", false);
    emitRatio('sandbox.batch10_vs_piscina_ivm_ratio', rounds, 'baseline.piscina_ivm_batch10', 'sandbox.batch10', 'bigger', "throughput of a 10-call turn / raw Piscina + isolated-vm's for 10 tasks at once; goal at least 0.5");

    emitLatency(emit, rounds, 'baseline.ivm_new_isolate', 'raw isolated-vm: new isolate + context + compile + evaluate + call, this thread');
    emitLatency(emit, rounds, 'sandbox.cold_tenant_call', 'first call of a new tenant (in-process): isolate, realm, compile, call');
    emitRatio('sandbox.cold_vs_raw_isolate_ratio', rounds, 'sandbox.cold_tenant_call', 'baseline.ivm_new_isolate', 'smaller', 'cold tenant call / raw new isolate; goal at most 1.0');
    emitLatency(emit, rounds, 'sandbox.cold_tenant_call_idle_worker', `first call of a new tenant (in-process) that finds the workers idle ${IDLE_WORKER_MS} ms: an isolate and realm built ahead`);
    emitRatio('sandbox.cold_idle_vs_raw_isolate_ratio', rounds, 'sandbox.cold_tenant_call_idle_worker', 'baseline.ivm_new_isolate', 'smaller', `a new tenant's first call after ${IDLE_WORKER_MS} ms of idleness / raw new isolate; goal at most 1.0`);
    emitLatency(emit, rounds, 'sandbox.cold_tenant_call_web_globals', "first call of a new tenant (in-process), a plugin whose tool reads URL and TextEncoder");
    emitRatio('sandbox.cold_web_globals_vs_cold_tenant_call', rounds, 'sandbox.cold_tenant_call_web_globals', 'sandbox.cold_tenant_call', 'smaller', "what loading URL and TextEncoder adds to a new tenant's first call (1.0: nothing)");
    coldTenantP50Us = rounds.latency('sandbox.cold_tenant_call').p50Us;
    warmCallP50Us = rounds.latency('sandbox.warm_call').p50Us;

    // One capability request, plugin to host and back: per round, (a call asking 10 times -
    // the same call asking none) / 10; beside the same host function called directly.
    const direct = rounds.p50s('trusted.capability_direct');
    const roundTrip = (suffix: string): number[] => {
      const many = rounds.p50s(`sandbox.capability_many${suffix}`);
      const none = rounds.p50s(`sandbox.capability_none${suffix}`);
      return many.map((us, index) => (us - (none[index] as number)) / REQUESTS_PER_CALL);
    };
    const perRound = { process: roundTrip(''), inProcess: roundTrip('_in_process') };
    const directLatency = rounds.latency('trusted.capability_direct');
    emit('trusted.capability_direct_p50', 'µs', directLatency.p50Us, 'smaller', false, `the host function a capability runs, called directly in this process (trusted), ${blockNote(100)}`);
    emit('sandbox.capability_round_trip_p50', 'µs', median(perRound.process), 'smaller', false, `one capability request from a warm realm to the host and back, process mode: (a call asking ${REQUESTS_PER_CALL} times - one asking none) / ${REQUESTS_PER_CALL}, median of ${ROUNDS} rounds' p50s`);
    emit('sandbox.capability_round_trip_in_process_p50', 'µs', median(perRound.inProcess), 'smaller', false, 'the same, in-process mode');
    const versusDirect = perRound.process.map((us, index) => us / (direct[index] as number));
    emit('sandbox.capability_round_trip_vs_direct_ratio', 'x', median(versusDirect), 'smaller', true, `capability round trip, process mode / the same function called directly (p50s, median of ${versusDirect.length} rounds)`, versusDirect);
    const versusDirectInProcess = perRound.inProcess.map((us, index) => us / (direct[index] as number));
    emit('sandbox.capability_round_trip_in_process_vs_direct_ratio', 'x', median(versusDirectInProcess), 'smaller', true, `capability round trip, in-process mode / the same function called directly (p50s, median of ${versusDirectInProcess.length} rounds)`, versusDirectInProcess);

    progress('cold plugin load');
    const load = await Rounds.run([{
      name: 'sandbox.plugin_load',
      iterations: options.quick ? 2 : 10,
      warmup: 1,
      body: async () => {
        const sandbox = createSandbox({ mode: 'in-process', threads: 1 });
        await sandbox.loadPlugins([freshDir]);
        await sandbox.close();
      },
    }], ROUNDS);
    const loaded = load.latency('sandbox.plugin_load');
    emit('sandbox.plugin_load_p50', 'ms', loaded.p50Us / 1000, 'smaller', false, 'new sandbox, manifest check, describe in a throwaway isolate');
    emit('sandbox.plugin_load_p99', 'ms', loaded.p99Us / 1000, 'smaller', false);
  } finally {
    for (const sandbox of opened) await sandbox.close();
    await peers.close();
    for (const dir of [freshDir, warmDir, largeDir, capabilityDir]) await rm(dir, { recursive: true, force: true });
  }

  // 3. Tenancy: work conservation and fair share, each against raw Piscina.
  await benchTenancy(options.quick, emit, progress);

  // 4. Code Mode: a program's sub-calls against one model turn, and its fixed cost against raw isolated-vm.
  await benchCodeMode(options.quick, emit, progress);

  // 5. Hard limits: how late a kill is answered, and the call after it.
  await benchKills(options.quick, emit, progress, coldTenantP50Us);

  // 6. Many tenants sharing the workers, against one tenant's warm call.
  await benchManyTenants(options.quick, emit, progress, warmCallP50Us);

  // 7. Remote executors over NATS against the local sandbox (skipped without nats-server).
  await benchRemote(options.quick, emit, progress);
  return metrics;
}
