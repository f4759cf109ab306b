// What a call leaves running after it was answered, and whose fault a process death is:
// - an isolate killed for CPU that goes on running (a builtin that ignores termination)
//   retires its process, so it steals no more CPU from the tenants there and new calls go
//   to a fresh process; its pair is struck;
// - a process that V8 aborts over one isolate (out of memory past recovery) names that
//   isolate's owner first, so the neighbour in flight then is a victim, never a suspect.
import { createEngine, type Engine, type ToolCallRequest, type ToolFailure, type ToolResult } from '@airlock/core';
import { createSandbox, type Sandbox } from '@airlock/sandbox';
import { sandboxProcessIds, type TestingHooks } from '@airlock/sandbox/testing';
import type { SandboxOptions } from '@airlock/sandbox';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestSandbox, pluginFolder } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(fixture: string, manifest: Record<string, unknown>, options: SandboxOptions & TestingHooks, observers: Parameters<typeof createEngine>[0]['observers'] = {}): Promise<{ sandbox: Sandbox; engine: Engine }> {
  const opened = await openTestSandbox(fixture, manifest, options, observers);
  cleanups.push(opened.close);
  return opened;
}

const code = (result: ToolResult | undefined): string => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error.code : 'ok');
const stamp = (id: string, ms: number): ToolCallRequest => ({ id, name: 'stamp', arguments: JSON.stringify({ ms }) });
const timed = (id: string, ms: number): ToolCallRequest => ({ id, name: 'timed', arguments: JSON.stringify({ ms }) });
const span = (result: ToolResult | undefined): { start: number; end: number } => (result as unknown as { value: { start: number; end: number } }).value;

function residentMb(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

/**
 * Not a suspect (suspects run one call at a time, in probation): two parallel calls of the
 * tenant overlap. Both threads of its (maybe new) process are started first: a thread still
 * starting on a loaded machine once made the pair run one after the other, as probation would.
 */
async function expectNotSuspect(engine: Engine, tenant: string): Promise<void> {
  await engine.run([timed('w1', 50), timed('w2', 50)], { tenant });
  const results = await engine.run([timed('a', 1000), timed('b', 1000)], { tenant });
  const [a, b] = results.map(span);
  expect(results.map(code)).toEqual(['ok', 'ok']);
  expect(b!.start).toBeLessThan(a!.end);
  expect(a!.start).toBeLessThan(b!.end);
}

/** A tenant name that lands on the same shard as `tenant`. */
function neighbourOf(tenant: string): string {
  const probe = createSandbox({ processes: 2 });
  try {
    for (let i = 0; ; i += 1) if (probe.shardOf(`near-${i}`) === probe.shardOf(tenant)) return `near-${i}`;
  } finally {
    void probe.close();
  }
}

describe('after the answer', () => {
  it('an isolate killed for CPU that goes on running retires its process: the next calls there run in a fresh one', async () => {
    // cpuMs leaves room for the fill, which is mostly first-touch page faults of 240 MB
    // (0.6-0.9 s on the 2-core VM, more under load): killed there, nothing would outlive
    // the answer. The sort then runs seconds past the kill.
    const { sandbox, engine } = await setup('hostile/zombie-sort.js', { limits: { cpuMs: 2000, timeoutMs: 20_000, memoryMb: 400 } }, { threads: 2, processes: 1 });
    await engine.run([{ id: 'warm', name: 'benign', arguments: '{}' }], { tenant: 'victim' });
    const before = sandboxProcessIds(sandbox);
    // 30 million numbers: filled well within cpuMs, then seconds of sorting after the kill.
    const [killed] = await engine.run([{ id: 'z', name: 'sort', arguments: JSON.stringify({ n: 30_000_000 }) }], { tenant: 'mallory' });
    expect(code(killed)).toBe('CPU_LIMIT');
    // Reported once it outlived its answer by ZOMBIE_MS: the process is retired (and, with no call in flight, gone).
    await expect.poll(() => before.filter((pid) => sandboxProcessIds(sandbox).includes(pid)).length, { timeout: 15_000, interval: 100 }).toBeLessThan(before.length);
    const [after] = await engine.run([{ id: 'v', name: 'benign', arguments: '{"text":"after"}' }], { tenant: 'victim' });
    expect(after).toMatchObject({ isError: false, value: { echoed: 'after' } });
  }, 60_000);
});

describe('an isolate V8 lost control of', () => {
  const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
  it.each([
    // An outside attack: a sparse array's reverse (or join, indexOf, map, ...: most generic
    // Array methods) runs on past the kill, and 5 s later isolated-vm declared the isolate
    // lost; the process aborted at once and every neighbour's call in flight died with it.
    ['a task that will not terminate', 'hostile/zombie-sparse.js', 'reverse', 500, 'CPU_LIMIT', true],
    // Up to Node 22 V8 runs out of memory past recovery here; from 24 isolated-vm disposes the isolate at its limit.
    ['out of memory past recovery', 'hostile/huge-array.js', 'attack', 5000, 'MEMORY_LIMIT', NODE_MAJOR < 24],
  ])('%s is contained: the neighbour\'s call in flight finishes, and the process ends once it is answered', async (_, fixture, tool, cpuMs, expected, retires) => {
    const neighbour = neighbourOf('mallory');
    const gate: { ids: Set<string>; done?: () => void } = { ids: new Set(['n1']) };
    const entered = new Promise<void>((resolve) => (gate.done = resolve));
    const { sandbox } = await setup(fixture, { limits: { cpuMs, timeoutMs: 8000, memoryMb: 64 } }, { threads: 2, processes: 2 });
    // The neighbour's plugin allows a call long enough to be in flight when isolated-vm gives up.
    const dir = await pluginFolder('plugins/timed.js', { name: 'timed', limits: { cpuMs: 15_000, timeoutMs: 20_000 } });
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, preSchedule: sandbox.preSchedule, observers: {
      onStage: ({ callId, stage }) => {
        if (stage === 'execute' && gate.ids.delete(callId) && gate.ids.size === 0) gate.done?.();
      },
    } });
    await engine.run([timed('warm', 0)], { tenant: neighbour });
    const before = sandboxProcessIds(sandbox);
    // About 5.5 s after the kill isolated-vm gives up: the neighbour's call is still running then.
    const inFlight = engine.run([timed('n1', 9000)], { tenant: neighbour });
    await entered;
    const [killed] = await engine.run([{ id: 'z', name: tool, arguments: '{}' }], { tenant: 'mallory' });
    expect(code(killed)).toBe(expected);
    const [finished] = await inFlight;
    expect(code(finished)).toBe('ok');
    // Retired: once the neighbour's call was answered, the process ended.
    if (retires) await expect.poll(() => before.filter((pid) => sandboxProcessIds(sandbox).includes(pid)).length, { timeout: 15_000, interval: 100 }).toBeLessThan(before.length);
    await expectNotSuspect(engine, neighbour);
  }, 60_000);
});

describe('memory that crosses from isolates', () => {
  it('huge rejected errors a plugin leaves behind are collected: cheap calls do not grow the sandbox process without bound', async () => {
    const { sandbox, engine } = await setup('hostile/rejected-huge-stack.js', { limits: { memoryMb: 64, cpuMs: 2000, timeoutMs: 10_000 } }, { threads: 2, processes: 1 });
    await engine.run([{ id: 'warm', name: 'benign', arguments: '{}' }], { tenant: 'victim' });
    const [pid] = sandboxProcessIds(sandbox);
    const before = residentMb(pid!);
    // 40 calls of about 32 MiB each: 1.3 GiB if none of it were ever collected.
    for (let i = 0; i < 40; i += 1) expect(code((await engine.run([{ id: `l${i}`, name: 'leave', arguments: '{}' }], { tenant: 'mallory' }))[0])).toBe('ok');
    expect(residentMb(pid!) - before).toBeLessThan(700);
    const [after] = await engine.run([{ id: 'v', name: 'benign', arguments: '{"text":"after"}' }], { tenant: 'victim' });
    expect(after).toMatchObject({ isError: false, value: { echoed: 'after' } });
  }, 60_000);
});

describe('memory parked in warm realms', () => {
  it('tenants parking memory in idle warm realms are evicted before the process reaches its ceiling: they start cold, no call is lost', async () => {
    const { sandbox, engine } = await setup('hostile/warm-hoard.js', { realm: 'warm', limits: { memoryMb: 128, cpuMs: 2000, timeoutMs: 10_000 } }, { threads: 2, processes: 1, processMemoryMb: 600 });
    const held = { name: 'held', arguments: '{}' };
    expect(code((await engine.run([{ id: 'v0', ...held }], { tenant: 'victim' }))[0])).toBe('ok');
    const pids = sandboxProcessIds(sandbox);
    const hoarders = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
    // Each hoarder keeps 80 MiB in each of its two warm realms (one per thread): 960 MiB in
    // all, against a process killed at 600.
    for (const tenant of hoarders) {
      const fills = await engine.run([{ id: 'a', name: 'fill', arguments: '{"mb":80}' }, { id: 'b', name: 'fill', arguments: '{"mb":80}' }], { tenant });
      expect(fills.map(code)).toEqual(['ok', 'ok']);
      expect(code((await engine.run([{ id: `v-${tenant}`, ...held }], { tenant: 'victim' }))[0])).toBe('ok');
    }
    expect(sandboxProcessIds(sandbox)).toEqual(pids);
    // The hoarders paid with their warm state: some of their realms were evicted and start
    // over (how many depends on the platform's own memory: half of them on Node 26).
    let kept = 0;
    for (const tenant of hoarders) {
      for (const result of await engine.run([{ id: 'a', ...held }, { id: 'b', ...held }], { tenant })) kept += (result as unknown as { value: number }).value;
    }
    expect(kept).toBeLessThan(hoarders.length * 160);
  }, 60_000);
});

describe('memory no isolate holds', () => {
  it('a process grown past 90% of its ceiling by process-wide caches takes no new calls and exits once idle: nobody is in flight when it would have been killed', async () => {
    const { sandbox, engine } = await setup('hostile/date-locale-hoard.js', { limits: { memoryMb: 64, cpuMs: 5000, timeoutMs: 10_000 } }, { threads: 2, processes: 1, processMemoryMb: 400 });
    expect(code((await engine.run([{ id: 'v0', name: 'ping', arguments: '{}' }], { tenant: 'victim' }))[0])).toBe('ok');
    const [first] = sandboxProcessIds(sandbox);
    const codes: string[] = [];
    // Each call leaves about 25 MiB in V8's date pattern cache; evicting isolates frees none of it.
    for (let round = 0; round < 40 && sandboxProcessIds(sandbox).includes(first as number); round += 1) {
      const [hoard, ping] = await Promise.all([
        engine.run([{ id: `h${round}`, name: 'hoard', arguments: JSON.stringify({ start: round * 500, count: 500 }) }], { tenant: 'hoarder' }),
        engine.run([{ id: `v${round}`, name: 'ping', arguments: '{}' }], { tenant: 'victim' }),
      ]);
      codes.push(code(hoard[0]), code(ping[0]));
    }
    expect(codes.filter((c) => c !== 'ok')).toEqual([]);
    // A fresh process serves the next call; the old one is gone.
    expect(code((await engine.run([{ id: 'after', name: 'ping', arguments: '{}' }], { tenant: 'victim' }))[0])).toBe('ok');
    expect(sandboxProcessIds(sandbox)).not.toContain(first);
  }, 90_000);
});

describe('whose fault a process death is', () => {
  it('a process V8 aborts over one isolate names its owner first: the neighbour in flight is neither struck nor a suspect', async () => {
    const neighbour = neighbourOf('mallory');
    const gate: { ids: Set<string>; done?: () => void } = { ids: new Set(['n1']) };
    const entered = new Promise<void>((resolve) => (gate.done = resolve));
    const { engine } = await setup('plugins/timed.js', { name: 'timed', limits: { cpuMs: 10_000, timeoutMs: 20_000 } }, { threads: 2, processes: 2, faults: ({ callId }) => (callId === 'm1' ? 'catastrophe' : undefined) }, {
      onStage: ({ callId, stage }) => {
        if (stage === 'execute' && gate.ids.delete(callId) && gate.ids.size === 0) gate.done?.();
      },
    });
    await engine.run([stamp('warm', 0)], { tenant: neighbour });
    const first = engine.run([stamp('n1', 3000)], { tenant: neighbour });
    await entered;
    const [aborted] = await engine.run([stamp('m1', 0)], { tenant: 'mallory' });
    expect(code(aborted)).toBe('SANDBOX_CRASH');
    expect(code((await first)[0])).toBe('SANDBOX_CRASH');
    // Its shard starts a new process; the neighbour is no suspect there.
    await expectNotSuspect(engine, neighbour);
  }, 30_000);

  it('a process that dies while a killed isolate there is still running is that pair\'s doing: the neighbour in flight is a victim, not a suspect', async () => {
    // The attack this stands for: a builtin that ignores termination ends, after its call was
    // answered CPU_LIMIT, in a V8 fatal error that aborts the process without naming anyone.
    // Here the neighbour's own call takes the process down (a test fault) while mallory's
    // killed sort still runs: whoever is in flight then must not be struck for it.
    const neighbour = neighbourOf('mallory');
    const { engine } = await setup('hostile/zombie-sort-timed.js', { limits: { cpuMs: 2000, timeoutMs: 20_000, memoryMb: 400 } }, { threads: 2, processes: 2, faults: ({ callId }) => (callId === 'dies' ? 'kill-process' : undefined) });
    await engine.run([timed('warm', 0)], { tenant: neighbour });
    const [killed] = await engine.run([{ id: 'z', name: 'sort', arguments: JSON.stringify({ n: 30_000_000 }) }], { tenant: 'mallory' });
    expect(code(killed)).toBe('CPU_LIMIT');
    // At once, well within the second before a still-running isolate is reported as a zombie.
    const [died] = await engine.run([timed('dies', 0)], { tenant: neighbour });
    expect(code(died)).toBe('SANDBOX_CRASH');
    await expectNotSuspect(engine, neighbour);
    // Mallory is: one at a time.
    const suspect = await engine.run([timed('c', 500), timed('d', 500)], { tenant: 'mallory' });
    const [c, d] = suspect.map(span);
    expect(suspect.map(code)).toEqual(['ok', 'ok']);
    expect(d!.start).toBeGreaterThanOrEqual(c!.end);
  }, 60_000);
});
