// Hard limits, timed: how long after its budget a call killed for CPU or wall time is
// answered (p50 and p99 overshoot), and what the next call of the same tenant costs once
// its isolate was killed, read against a warm call measured in the same loop. Kills are
// slow (each spends its budget), so these run apart from the interleaved rounds.
import { createEngine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, percentileOf } from './measure.js';
import type { Emit } from './metrics.js';
import { SUM_ARGS_JSON } from './sum-tool.js';

const CPU_MS = 50;
const TIMEOUT_MS = 150;
const KILL_PLUGIN = `export default { tools: [
  { name: 'kill_spin', description: 'spins', parameters: { type: 'object' }, execute: () => { for (;;) {} } },
  { name: 'kill_wait', description: 'waits for ever', parameters: { type: 'object' }, execute: () => new Promise(() => {}) },
  { name: 'kill_sum', description: 'Adds two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, execute: ({ a, b }) => ({ sum: a + b }) },
] };`;

const one = (name: string, args = '{}'): ToolCallRequest[] => [{ id: 'k', name, arguments: args }];
const LIMIT_CODES: ReadonlySet<string | undefined> = new Set(['CPU_LIMIT', 'TIMEOUT']);

function failedWith(results: readonly ToolResult[]): string | undefined {
  const [result] = results;
  return result !== undefined && result.isError ? result.error.code : undefined;
}

/** `coldTenantP50Us`: a new tenant's first call measured earlier in this run (in-process), the cold start the call after a kill must not pay. */
export async function benchKills(quick: boolean, emit: Emit, progress: (label: string) => void, coldTenantP50Us: number): Promise<void> {
  progress('limit kills: overshoot, and the call after a kill');
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-'));
  await writeFile(join(dir, 'index.js'), KILL_PLUGIN);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-kill', module: './index.js', realm: 'warm', limits: { cpuMs: CPU_MS, timeoutMs: TIMEOUT_MS } }));
  const sandbox = createSandbox({ threads: 2 });
  try {
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    const timed = async (calls: ToolCallRequest[], tenant: string): Promise<{ ms: number; results: ToolResult[] }> => {
      const started = performance.now();
      const results = await engine.run(calls, { tenant });
      return { ms: performance.now() - started, results };
    };
    const cpuOver: number[] = [];
    const wallOver: number[] = [];
    const afterKill: number[] = [];
    const warm: number[] = [];
    const iterations = quick ? 4 : 30;
    for (let i = -1; i < iterations; i += 1) {
      const tenant = `kill-${i}`;
      await timed(one('kill_sum', SUM_ARGS_JSON), tenant); // the tenant's isolate exists and is warm
      const spun = await timed(one('kill_spin'), tenant);
      const afterCpu = await timed(one('kill_sum', SUM_ARGS_JSON), tenant);
      const waited = await timed(one('kill_wait'), tenant);
      const afterWall = await timed(one('kill_sum', SUM_ARGS_JSON), tenant);
      const warmCall = await timed(one('kill_sum', SUM_ARGS_JSON), tenant);
      const spunCode = failedWith(spun.results);
      const waitedCode = failedWith(waited.results);
      if (!LIMIT_CODES.has(spunCode) || !LIMIT_CODES.has(waitedCode)) throw new Error(`bench: the kill plugin was not stopped by its limits (${spunCode}, ${waitedCode})`);
      if (i < 0) continue; // warm-up
      // CPU is the budget a CPU kill spends: the wall time past it is how long the answer took.
      // On a loaded machine a spin may meet its wall-clock deadline before its CPU budget (or
      // the reverse): such a kill is not the one being timed, and is left out.
      if (spunCode === 'CPU_LIMIT') cpuOver.push(spun.ms - CPU_MS);
      if (waitedCode === 'TIMEOUT') wallOver.push(waited.ms - TIMEOUT_MS);
      afterKill.push(afterCpu.ms * 1000, afterWall.ms * 1000);
      warm.push(warmCall.ms * 1000);
    }
    if (cpuOver.length === 0 || wallOver.length === 0) throw new Error('bench: no kill could be timed: every spin met its deadline first, or every wait its CPU budget (is the machine overloaded?)');
    const note = `${cpuOver.length + wallOver.length} kills, process mode`;
    emit('sandbox.cpu_kill_overshoot_p50', 'ms', percentileOf(cpuOver, 0.5), 'smaller', false, `a call killed at cpuMs ${CPU_MS}: answered this long after ${CPU_MS} ms of wall time (${note})`);
    emit('sandbox.cpu_kill_overshoot_p99', 'ms', percentileOf(cpuOver, 0.99), 'smaller', false, 'goal at most 50; on a loaded machine this also counts time the spin waited for a core');
    emit('sandbox.timeout_kill_overshoot_p50', 'ms', percentileOf(wallOver, 0.5), 'smaller', false, `a call killed at timeoutMs ${TIMEOUT_MS}: answered this long after its deadline (${note})`);
    emit('sandbox.timeout_kill_overshoot_p99', 'ms', percentileOf(wallOver, 0.99), 'smaller', false, 'goal at most 50');
    emit('sandbox.after_kill_call_p50', 'µs', percentileOf(afterKill, 0.5), 'smaller', false, 'the same tenant\'s next call after its isolate was killed');
    emit('sandbox.after_kill_call_p99', 'µs', percentileOf(afterKill, 0.99), 'smaller', false);
    emit('sandbox.after_kill_vs_warm_call', 'x', median(afterKill) / median(warm), 'smaller', false, "the call after a kill / a warm call of the same tenant, same loop: the new isolate's first call, with its realm built ahead");
    // Process mode against in-process: the hop counts against the call after a kill.
    if (Number.isFinite(coldTenantP50Us)) emit('sandbox.after_kill_vs_cold_tenant_call', 'x', median(afterKill) / coldTenantP50Us, 'smaller', false, "the call after a kill (process mode) / a new tenant's first call (in-process, sandbox.cold_tenant_call): a cold start is 1.0; goal well below");
  } finally {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}
