// Remote executors against the local sandbox, measured in the same rounds: a warm-realm call
// and a 10-call turn through `createRemoteSandbox` (NATS on loopback, one executor in this
// process running the same process-mode sandbox) beside the same through `createSandbox`,
// and a raw NATS request-reply round trip (a remote call takes two). The NATS server's own
// CPU time per remote call is the figure docs/architecture.md scales to a fleet.
import { createEngine, type ToolCallRequest } from '@airlock/core';
import { createRemoteSandbox, createSandbox, startExecutor, type Sandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { median, Rounds, ROUNDS } from './measure.js';
import type { Emit, Metric } from './metrics.js';
import { startBenchNats } from './nats-server.js';
import { SUM_ARGS_JSON, sumPlugin } from './sum-tool.js';

const calls = (count: number): ToolCallRequest[] => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name: 'remote_sum', arguments: SUM_ARGS_JSON }));

export async function benchRemote(quick: boolean, emit: Emit, progress: (label: string) => void): Promise<void> {
  progress('remote executor over NATS vs local sandbox');
  const count = (iterations: number): number => (quick ? Math.max(10, Math.round(iterations / 10)) : iterations);
  const nats = await startBenchNats();
  if (nats === undefined) {
    process.stderr.write('airlock bench: nats-server not found, remote executor figures skipped (apt-get install nats-server)\n');
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-remote-'));
  const opened: Sandbox[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  try {
    await writeFile(join(dir, 'index.js'), sumPlugin('remote'));
    await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-remote', module: './index.js', realm: 'warm', limits: { cpuMs: 5000, timeoutMs: 10_000 } }));
    const local = createSandbox({ threads: 2 });
    opened.push(local);
    await local.loadPlugins([dir]);
    const executor = await startExecutor({ url: nats.url, plugins: [dir], slots: 2 });
    closers.push(() => executor.drain());
    const remote = await createRemoteSandbox({ url: nats.url, plugins: [dir] });
    opened.push(remote);
    const localEngine = createEngine({ sources: [local], policy: { default: 'allow' } });
    const remoteEngine = createEngine({ sources: [remote], policy: { default: 'allow' } });
    // Raw request-reply: an echo subscriber on its own connection, as an executor would be.
    const echo = await connect({ servers: nats.url });
    closers.push(() => echo.close());
    echo.subscribe('bench.echo', { callback: (_error, message) => message.respond(message.data) });
    const client = await connect({ servers: nats.url });
    closers.push(() => client.close());
    const payload = new TextEncoder().encode(SUM_ARGS_JSON);
    const one = calls(1);
    const ten = calls(10);
    const rounds = await Rounds.run([
      { name: 'baseline.nats_request_reply', iterations: count(1000), warmup: count(100), body: () => client.request('bench.echo', payload, { timeout: 5000 }) },
      { name: 'remote.local_warm_call', iterations: count(500), warmup: count(50), body: () => localEngine.run(one) },
      { name: 'remote.warm_call', iterations: count(500), warmup: count(50), body: () => remoteEngine.run(one) },
      { name: 'remote.local_batch10', iterations: count(200), warmup: count(20), body: () => localEngine.run(ten) },
      { name: 'remote.batch10', iterations: count(200), warmup: count(20), body: () => remoteEngine.run(ten) },
    ], ROUNDS);
    const latency = (name: string, what: string): void => {
      const figures = rounds.latency(name);
      emit(`${name}_p50`, 'µs', figures.p50Us, 'smaller', false, what);
      emit(`${name}_p99`, 'µs', figures.p99Us, 'smaller', false);
    };
    latency('baseline.nats_request_reply', 'raw NATS request-reply round trip on loopback (nats client, echo subscriber)');
    latency('remote.local_warm_call', 'warm-realm call, local sandbox (process mode, 2 threads)');
    latency('remote.warm_call', 'warm-realm call through createRemoteSandbox: offer, accept, go, result over NATS');
    latency('remote.local_batch10', 'a 10-call turn, local sandbox');
    latency('remote.batch10', 'a 10-call turn through remote executors (one executor, 2 slots)');
    const ratio = (name: string, numerator: string, denominator: string, direction: Metric['direction'], what: string): void => {
      const perRound = rounds.ratios(numerator, denominator);
      emit(name, 'x', median(perRound), direction, true, `${what} (p50s, median of ${perRound.length} rounds)`, perRound);
    };
    ratio('remote.warm_call_vs_local_ratio', 'remote.warm_call', 'remote.local_warm_call', 'smaller', 'remote warm call / local warm call');
    ratio('remote.batch10_vs_local_ratio', 'remote.batch10', 'remote.local_batch10', 'smaller', 'remote 10-call turn / local 10-call turn');
    emit('remote.per_call_overhead', 'µs', rounds.latency('remote.warm_call').p50Us - rounds.latency('remote.local_warm_call').p50Us, 'smaller', false,
      `remote p50 - local p50; ${(rounds.latency('remote.warm_call').p50Us / rounds.latency('baseline.nats_request_reply').p50Us).toFixed(1)}x a raw NATS round trip`);

    // The NATS server's CPU per remote call, one call at a time (no executor ever busy): what
    // one server spends carrying a call. /proc counts in 10 ms ticks, hence many calls.
    const sample = count(3000);
    const before = nats.cpuUs();
    for (let i = 0; i < sample; i += 1) await remoteEngine.run(one);
    const after = nats.cpuUs();
    if (before !== undefined && after !== undefined) {
      emit('remote.nats_server_cpu_per_call', 'µs', (after - before) / sample, 'smaller', false, `nats-server CPU (user+system) per remote call, over ${sample} calls one at a time`);
    }
  } finally {
    for (const sandbox of opened) await sandbox.close();
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
