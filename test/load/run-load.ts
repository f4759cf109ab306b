// The load run: many tenants' turns through one engine and one sandbox at once, with
// hostile calls mixed in. It counts what must never happen (lost calls, wrong codes,
// cross-tenant observations) and measures latency, throughput and peak memory.
import { createEngine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { sandboxProcessIds } from '@airlock/sandbox/testing';
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
  readonly throughputPerSecond: number;
  readonly wallSeconds: number;
  readonly peakRssMb: { readonly host: number; readonly sandbox: number };
  readonly codes: Readonly<Record<string, number>>;
  readonly mistakes: readonly string[];
}

const HOSTILE: readonly { tool: string; code: string }[] = [
  { tool: 'spin', code: 'CPU_LIMIT' },
  { tool: 'hog', code: 'MEMORY_LIMIT' },
  { tool: 'hang', code: 'TIMEOUT' },
  { tool: 'boom', code: 'TOOL_ERROR' },
  { tool: 'flood', code: 'OUTPUT_TOO_LARGE' },
];

/** A small deterministic generator, so a run can be repeated exactly. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

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
  const sandbox = createSandbox({ threads: 2 });
  let sandboxPeak = 0;
  const sampler = setInterval(() => {
    for (const pid of sandboxProcessIds(sandbox)) sandboxPeak = Math.max(sandboxPeak, rssMb(pid, 'VmRSS'));
  }, 100);
  try {
    await sandbox.loadPlugins([dir, memoryDir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, preSchedule: sandbox.preSchedule });

    // Each tenant gets its share of calls, cut into turns; turns of all tenants interleave.
    interface Planned { readonly request: ToolCallRequest; readonly expected: string; readonly n: number }
    const turns: { tenant: string; calls: Planned[] }[] = [];
    const perTenant = new Map<string, Planned[]>();
    let hostile = 0;
    for (let i = 0; i < options.calls; i += 1) {
      const tenant = `tenant-${Math.floor(next() * options.tenants)}`;
      const bad = next() < options.hostileRatio ? HOSTILE[Math.floor(next() * HOSTILE.length)] : undefined;
      if (bad !== undefined) hostile += 1;
      const planned: Planned = bad === undefined
        ? { request: { id: `c${i}`, name: 'probe', arguments: JSON.stringify({ n: i }) }, expected: 'ok', n: i }
        : { request: { id: `c${i}`, name: bad.tool, arguments: '{}' }, expected: bad.code, n: i };
      const list = perTenant.get(tenant) ?? [];
      list.push(planned);
      perTenant.set(tenant, list);
    }
    for (const [tenant, list] of perTenant) for (let i = 0; i < list.length; i += turnSize) turns.push({ tenant, calls: list.slice(i, i + turnSize) });
    for (let i = turns.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [turns[i], turns[j]] = [turns[j]!, turns[i]!];
    }

    let lost = 0;
    let wrongCode = 0;
    let crossTenant = 0;
    const mistakes: string[] = [];
    const benignMs: number[] = [];
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
          if (code !== planned.expected) {
            wrongCode += 1;
            if (mistakes.length < 20) mistakes.push(`${planned.request.name} for ${turn.tenant}: expected ${planned.expected}, got ${code}${result.isError ? ` (${result.error.message})` : ''}`);
            return;
          }
          if (!result.isError) {
            const value = result.value as { n: number; tenant: string; cross: boolean };
            if (value.cross || value.tenant !== turn.tenant) crossTenant += 1;
            if (value.n !== planned.n) wrongCode += 1;
            benignMs.push(result.durationMs);
          }
        });
      }
    };
    await Promise.all(Array.from({ length: options.concurrentTurns ?? 8 }, worker));
    const wallSeconds = (performance.now() - started) / 1000;
    benignMs.sort((a, b) => a - b);
    const at = (q: number): number => benignMs[Math.min(benignMs.length - 1, Math.floor(q * benignMs.length))] ?? 0;
    for (const pid of sandboxProcessIds(sandbox)) sandboxPeak = Math.max(sandboxPeak, rssMb(pid, 'VmHWM'));
    return {
      calls: options.calls,
      tenants: options.tenants,
      hostile,
      lost,
      wrongCode,
      crossTenant,
      benignP50Ms: Math.round(at(0.5) * 100) / 100,
      benignP99Ms: Math.round(at(0.99) * 100) / 100,
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
  }
}
