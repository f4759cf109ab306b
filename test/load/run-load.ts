// The load run: many tenants' turns through one engine and one sandbox at once, with
// hostile calls mixed in, and one more tenant whose calls abort their sandbox process.
// It counts what must never happen (lost calls, wrong codes, cross-tenant observations),
// what the aborts cost the other tenants (their calls answered SANDBOX_CRASH, before and
// after the aborter's quarantine), and measures latency per tenant, throughput and memory.
import { createEngine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createTestSandbox, sandboxProcessIds } from '@airlock/sandbox/testing';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pluginFolder } from '../support/plugin-harness.js';

export interface LoadOptions {
  readonly calls: number;
  readonly tenants: number;
  /** Share of hostile calls, 0..1. */
  readonly hostileRatio: number;
  /** Calls per model turn. */
  readonly turnSize?: number;
  /** Turns in flight at once. */
  readonly concurrentTurns?: number;
  readonly seed?: number;
  /** Calls of the tenant that aborts its sandbox process, spread over the run. 0: none. */
  readonly abortCalls?: number;
  /**
   * How it aborts: "fault" (default) kills its process at the start of each call through
   * the fault injection (deterministic, for CI); "v8" runs a real V8 fatal error (an array
   * too large for the heap), which usually aborts the process and sometimes is stopped
   * first by its CPU or memory limit.
   */
  readonly abortWith?: 'fault' | 'v8';
}

/** Latency of benign calls, in ms. */
export interface Latency {
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface AbortReport {
  readonly tenant: string;
  readonly calls: number;
  readonly abortWith: 'fault' | 'v8';
  /** Its calls that took a process down (or killed their worker). */
  readonly processAborts: number;
  /** Its calls stopped by a limit before they could abort (v8 only). */
  readonly stoppedByLimit: number;
  /** Its calls refused by the quarantine, without reaching a process. */
  readonly quarantined: number;
  /** Seconds into the run of the first refusal. */
  readonly firstQuarantineAtS: number | undefined;
  /** Other tenants' calls answered SANDBOX_CRASH (in flight in an aborted process). */
  readonly othersLost: number;
  /** Their share of all other tenants' calls. */
  readonly othersLostShare: number;
  /**
   * Of those, lost after the first refusal. A lost call is answered the moment its process
   * dies, so its answer time is when the crash that cost it was recorded (its commit can come
   * much later: a turn commits in call order, behind its slower calls).
   */
  readonly othersLostAfterQuarantine: number;
  /** When each of those calls was lost, in seconds into the run. */
  readonly othersLostAtS: readonly number[];
  /** Tenants sharing the aborter's sandbox process, and the rest. */
  readonly sameShard: Latency & { readonly tenants: number; readonly lost: number };
  readonly otherShards: Latency & { readonly tenants: number; readonly lost: number };
}

export interface LoadReport {
  readonly calls: number;
  readonly tenants: number;
  readonly hostile: number;
  readonly lost: number;
  readonly wrongCode: number;
  readonly crossTenant: number;
  readonly benignP50Ms: number;
  readonly benignP99Ms: number;
  /** Benign latency per tenant; `lost` counts its calls lost to another tenant's aborts. */
  readonly perTenant: Readonly<Record<string, Latency & { readonly lost: number }>>;
  /** p99 of the median tenant and of the worst tenant. */
  readonly tenantP99Ms: { readonly median: number; readonly worst: number };
  readonly aborts: AbortReport | undefined;
  readonly throughputPerSecond: number;
  readonly wallSeconds: number;
  readonly peakRssMb: { readonly host: number; readonly sandbox: number };
  readonly codes: Readonly<Record<string, number>>;
  readonly mistakes: readonly string[];
}

/** Each hostile call's tool and the one code it must end with (`ok` with a value where the attack returns one). */
const HOSTILE: readonly { tool: string; code: string; value?: unknown }[] = [
  { tool: 'spin', code: 'CPU_LIMIT' },
  { tool: 'hog', code: 'MEMORY_LIMIT' },
  { tool: 'hang', code: 'TIMEOUT' },
  { tool: 'boom', code: 'TOOL_ERROR' },
  { tool: 'flood', code: 'OUTPUT_TOO_LARGE' },
  // Call scope: work left behind acts as nobody; prototype poison and stray rejections are the plugin's own.
  { tool: 'leftover', code: 'ok', value: 'started' },
  { tool: 'poison', code: 'TOOL_ERROR' },
  { tool: 'stray', code: 'ok', value: 1 },
  { tool: 'forge', code: 'ok', value: { ok: false, code: 'OUTPUT_TOO_LARGE', message: 'forged' } },
];

/** A small deterministic generator, so a run can be repeated exactly. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function percentile(sorted: readonly number[], q: number): number {
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100) / 100;
}

function latency(samples: number[]): Latency {
  samples.sort((a, b) => a - b);
  return { calls: samples.length, p50Ms: percentile(samples, 0.5), p99Ms: percentile(samples, 0.99) };
}

const ABORTER = 'aborter';

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Math.round(Number(match[1]) / 1024);
  } catch {
    return 0;
  }
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const turnSize = options.turnSize ?? 10;
  const next = random(options.seed ?? 42);
  const dir = await pluginFolder('plugins/load.js', { name: 'load', realm: 'warm', limits: { memoryMb: 16, cpuMs: 100, timeoutMs: 400, maxOutputBytes: 65536 } });
  const memoryDir = await pluginFolder('plugins/load-memory.js', { name: 'load-memory', limits: { memoryMb: 16, cpuMs: 5000, timeoutMs: 10_000 } });
  const crashDir = await pluginFolder('plugins/load-crash.js', { name: 'load-crash', limits: { cpuMs: 5000, timeoutMs: 10_000 } });
  const scopeDir = await pluginFolder('plugins/load-call-scope.js', { name: 'load-call-scope', capabilities: ['kv.get'], limits: { memoryMb: 16, cpuMs: 200, timeoutMs: 1000 } });
  // Every capability request names the tenant its plugin believes it runs as; the host
  // answers for context.tenant. A mismatch, or a request after its call ended, is a breach.
  let capabilityBreaches = 0;
  const capabilities = {
    'kv.get': (argument: unknown, context: { tenant: string; signal: AbortSignal }) => {
      const claimed = (argument as { claimed?: unknown }).claimed;
      if (claimed !== context.tenant || context.signal.aborted) capabilityBreaches += 1;
      return null;
    },
  };
  // Defaults: 2 processes (shards), 2 threads each plus the reserve thread.
  const abortWith = options.abortWith ?? 'fault';
  const sandbox = createTestSandbox({ threads: 2, capabilities, ...(abortWith === 'fault' ? { faults: ({ tenant }) => (tenant === ABORTER ? 'kill-process' : undefined) } : {}) });
  let sandboxPeak = 0;
  const sampler = setInterval(() => {
    for (const pid of sandboxProcessIds(sandbox)) sandboxPeak = Math.max(sandboxPeak, rssMb(pid, 'VmRSS'));
  }, 100);
  try {
    await sandbox.loadPlugins([dir, memoryDir, crashDir, scopeDir]);
    // When each call was answered (its result stage, before the in-order commit), to tell
    // losses before and after the quarantine by when they happened.
    const answeredAt = new Map<string, number>();
    const engine = createEngine({
      tools: sandbox.tools(),
      policy: { default: 'allow' },
      preSchedule: sandbox.preSchedule,
      observers: { onStage: ({ callId, stage }) => (stage === 'result' ? answeredAt.set(callId, performance.now()) : undefined) },
    });

    // Each tenant gets its share of calls, cut into turns; turns of all tenants interleave.
    interface Planned { readonly request: ToolCallRequest; readonly expected: string; readonly n: number; readonly value?: unknown }
    const turns: { tenant: string; calls: Planned[] }[] = [];
    const perTenantPlan = new Map<string, Planned[]>();
    let hostile = 0;
    for (let i = 0; i < options.calls; i += 1) {
      const tenant = `tenant-${Math.floor(next() * options.tenants)}`;
      const bad = next() < options.hostileRatio ? HOSTILE[Math.floor(next() * HOSTILE.length)] : undefined;
      if (bad !== undefined) hostile += 1;
      const planned: Planned = bad === undefined
        ? { request: { id: `c${i}`, name: 'probe', arguments: JSON.stringify({ n: i }) }, expected: 'ok', n: i }
        : { request: { id: `c${i}`, name: bad.tool, arguments: '{}' }, expected: bad.code, n: i, ...(bad.value === undefined ? {} : { value: bad.value }) };
      const list = perTenantPlan.get(tenant) ?? [];
      list.push(planned);
      perTenantPlan.set(tenant, list);
    }
    for (const [tenant, list] of perTenantPlan) for (let i = 0; i < list.length; i += turnSize) turns.push({ tenant, calls: list.slice(i, i + turnSize) });
    for (let i = turns.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [turns[i], turns[j]] = [turns[j]!, turns[i]!];
    }
    // The aborter's calls, one per turn, spread evenly over the run.
    const abortCalls = options.abortCalls ?? 0;
    for (let k = abortCalls - 1; k >= 0; k -= 1) {
      const at = Math.floor(((k + 1) * turns.length) / (abortCalls + 1));
      turns.splice(at, 0, { tenant: ABORTER, calls: [{ request: { id: `abort${k}`, name: 'abort_process', arguments: '{}' }, expected: 'SANDBOX_CRASH', n: -1 }] });
    }

    let lost = 0;
    let wrongCode = 0;
    let crossTenant = 0;
    const mistakes: string[] = [];
    const benignMs: number[] = [];
    const tenantMs = new Map<string, number[]>();
    const tenantLost = new Map<string, number>();
    const othersLostAt: string[] = [];
    let othersCalls = 0;
    let processAborts = 0;
    let stoppedByLimit = 0;
    let quarantined = 0;
    let firstQuarantineAt: number | undefined;
    const codes: Record<string, number> = {};
    const started = performance.now();
    let cursor = 0;
    const worker = async (): Promise<void> => {
      while (cursor < turns.length) {
        const turn = turns[cursor]!;
        cursor += 1;
        const results: ToolResult[] = await engine.run(turn.calls.map((c) => c.request), { tenant: turn.tenant });
        if (results.length !== turn.calls.length) lost += Math.abs(turn.calls.length - results.length);
        turn.calls.forEach((planned, index) => {
          const result = results[index];
          if (result === undefined || result.callId !== planned.request.id) {
            lost += 1;
            return;
          }
          const code = result.isError ? result.error.code : 'ok';
          codes[code] = (codes[code] ?? 0) + 1;
          if (turn.tenant === ABORTER) {
            if (result.isError && result.error.message.includes('quarantined until')) {
              quarantined += 1;
              // Turns finish out of order: the earliest refusal, not the first one looked at.
              firstQuarantineAt = Math.min(firstQuarantineAt ?? Infinity, answeredAt.get(planned.request.id) ?? Infinity);
            } else if (code === 'SANDBOX_CRASH') processAborts += 1;
            else if (abortWith === 'v8' && (code === 'CPU_LIMIT' || code === 'MEMORY_LIMIT')) {
              stoppedByLimit += 1;
              return; // a real abort is not certain: a limit may stop it first
            }
          } else {
            othersCalls += 1;
            // In flight in the process another tenant aborted: a loss the shards bound, counted apart.
            if (abortCalls > 0 && code === 'SANDBOX_CRASH' && planned.expected !== 'SANDBOX_CRASH') {
              tenantLost.set(turn.tenant, (tenantLost.get(turn.tenant) ?? 0) + 1);
              othersLostAt.push(planned.request.id);
              return;
            }
          }
          if (code !== planned.expected) {
            wrongCode += 1;
            if (mistakes.length < 20) mistakes.push(`${planned.request.name} for ${turn.tenant}: expected ${planned.expected}, got ${code}${result.isError ? ` (${result.error.message})` : ''}`);
            return;
          }
          if (!result.isError && planned.value !== undefined) {
            if (JSON.stringify(result.value) !== JSON.stringify(planned.value)) {
              wrongCode += 1;
              if (mistakes.length < 20) mistakes.push(`${planned.request.name} for ${turn.tenant}: expected ${JSON.stringify(planned.value)}, got ${JSON.stringify(result.value)}`);
            }
            return;
          }
          if (!result.isError) {
            const value = result.value as { n: number; tenant: string; cross: boolean };
            if (value.cross || value.tenant !== turn.tenant) crossTenant += 1;
            if (value.n !== planned.n) wrongCode += 1;
            benignMs.push(result.durationMs);
            const mine = tenantMs.get(turn.tenant) ?? [];
            mine.push(result.durationMs);
            tenantMs.set(turn.tenant, mine);
          }
        });
      }
    };
    await Promise.all(Array.from({ length: options.concurrentTurns ?? 8 }, worker));
    const wallSeconds = (performance.now() - started) / 1000;
    const overall = latency(benignMs);
    const perTenant: Record<string, Latency & { lost: number }> = {};
    for (const tenant of perTenantPlan.keys()) perTenant[tenant] = { ...latency(tenantMs.get(tenant) ?? []), lost: tenantLost.get(tenant) ?? 0 };
    const p99s = Object.values(perTenant).map((figures) => figures.p99Ms).sort((a, b) => a - b);
    const group = (same: boolean): Latency & { tenants: number; lost: number } => {
      const tenants = [...perTenantPlan.keys()].filter((tenant) => (sandbox.shardOf(tenant) === sandbox.shardOf(ABORTER)) === same);
      return { ...latency(tenants.flatMap((tenant) => tenantMs.get(tenant) ?? [])), tenants: tenants.length, lost: tenants.reduce((sum, tenant) => sum + (tenantLost.get(tenant) ?? 0), 0) };
    };
    const aborts: AbortReport | undefined = abortCalls === 0 ? undefined : {
      tenant: ABORTER,
      calls: abortCalls,
      abortWith,
      processAborts,
      stoppedByLimit,
      quarantined,
      firstQuarantineAtS: firstQuarantineAt === undefined ? undefined : Math.round((firstQuarantineAt - started) / 100) / 10,
      othersLost: othersLostAt.length,
      othersLostShare: othersCalls === 0 ? 0 : Math.round((othersLostAt.length / othersCalls) * 1e5) / 1e5,
      othersLostAfterQuarantine: firstQuarantineAt === undefined ? 0 : othersLostAt.filter((id) => (answeredAt.get(id) ?? Infinity) > firstQuarantineAt!).length,
      othersLostAtS: othersLostAt.map((id) => Math.round(((answeredAt.get(id) ?? Infinity) - started) / 100) / 10).sort((a, b) => a - b),
      sameShard: group(true),
      otherShards: group(false),
    };
    for (const pid of sandboxProcessIds(sandbox)) sandboxPeak = Math.max(sandboxPeak, rssMb(pid, 'VmHWM'));
    return {
      calls: options.calls,
      tenants: options.tenants,
      hostile,
      lost,
      wrongCode,
      crossTenant: crossTenant + capabilityBreaches,
      benignP50Ms: overall.p50Ms,
      benignP99Ms: overall.p99Ms,
      perTenant,
      tenantP99Ms: { median: p99s[Math.floor(p99s.length / 2)] ?? 0, worst: p99s.at(-1) ?? 0 },
      aborts,
      throughputPerSecond: Math.round(options.calls / wallSeconds),
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      peakRssMb: { host: Math.round(process.resourceUsage().maxRSS / 1024), sandbox: sandboxPeak },
      codes,
      mistakes,
    };
  } finally {
    clearInterval(sampler);
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
    await rm(memoryDir, { recursive: true, force: true });
    await rm(crashDir, { recursive: true, force: true });
    await rm(scopeDir, { recursive: true, force: true });
  }
}
