// Fault injection at chosen points of a batch, and tenants sharing one sandbox.
// Every call gets exactly one result with the right code; the pool recovers; the next
// batch succeeds; one tenant cannot see another (fairness: fair-share.test.ts).
import { createEngine, type Engine, type ToolCallRequest, type ToolFailure, type ToolResult } from '@airlock/core';
import type { Sandbox } from '@airlock/sandbox';
import { createTestSandbox, sandboxProcessIds, type Fault } from '@airlock/sandbox/testing';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(options: { faults?: Record<string, Fault>; threads?: number; realm?: 'warm' | 'fresh'; approver?: () => unknown } = {}): Promise<{ sandbox: Sandbox; engine: Engine }> {
  const dir = await pluginFolder('plugins/busy.js', { name: 'busy', realm: options.realm ?? 'fresh', limits: { cpuMs: 10_000, timeoutMs: 20_000 }, permissions: { tools: { whoami: options.approver ? 'ask' : 'allow' } } });
  const faults = options.faults;
  const sandbox = createTestSandbox({
    threads: options.threads ?? 2,
    ...(faults === undefined ? {} : { faults: ({ callId }: { callId: string }) => faults[callId] }),
  });
  cleanups.push(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });
  await sandbox.loadPlugins([dir]);
  const engine = createEngine({
    tools: sandbox.tools(),
    policy: { default: 'deny', rules: sandbox.policyRules() },
    preSchedule: sandbox.preSchedule,
    ...(options.approver === undefined ? {} : { approver: options.approver }),
    observers: { onResult: () => { throw new Error('a faulty observer'); } },
  });
  return { sandbox, engine };
}

const busy = (id: string, ms = 50, tool = 'busy'): ToolCallRequest => ({ id, name: tool, arguments: JSON.stringify({ ms, tag: id }) });
const codes = (results: ToolResult[]) => results.map((r) => (r.isError ? (r as ToolFailure).error.code : 'ok'));

describe('fault injection', () => {
  it('kill-worker: only the call whose worker died fails; the pool replaces the worker', async () => {
    const { engine } = await setup({ faults: { b: 'kill-worker' } });
    const results = await engine.run([busy('a', 300), busy('b'), busy('c')]);
    expect(results.map((r) => r.callId)).toEqual(['a', 'b', 'c']);
    expect(codes(results)).toEqual(['ok', 'SANDBOX_CRASH', 'ok']);
    expect(codes(await engine.run([busy('x'), busy('y'), busy('z', 10, 'busy_exclusive')]))).toEqual(['ok', 'ok', 'ok']);
  });

  it('kill-process: every call in flight in that process fails once; the next batch runs on a fresh one', async () => {
    const { sandbox, engine } = await setup({ faults: { b: 'kill-process' } });
    await engine.run([busy('warmup')]);
    const [pid] = sandboxProcessIds(sandbox);
    const results = await engine.run([busy('a', 1000), busy('b'), busy('c')]);
    expect(results).toHaveLength(3);
    expect((results[1] as ToolFailure).error.code).toBe('SANDBOX_CRASH');
    for (const code of codes(results)) expect(['ok', 'SANDBOX_CRASH']).toContain(code);
    expect(codes(await engine.run([busy('x'), busy('y')]))).toEqual(['ok', 'ok']);
    expect(sandboxProcessIds(sandbox)[0]).not.toBe(pid);
  });

  it('a SIGINT to the sandbox process (a terminal Ctrl-C reaches the whole process group) kills nothing: the embedder decides what to cancel', async () => {
    const { sandbox, engine } = await setup();
    await engine.run([busy('warmup')]);
    const [pid] = sandboxProcessIds(sandbox);
    const running = engine.run([busy('a', 400), busy('b', 400)]);
    process.kill(pid!, 'SIGINT');
    expect(codes(await running)).toEqual(['ok', 'ok']);
    expect(sandboxProcessIds(sandbox)).toEqual([pid]);
  });

  it('fail-isolate: a call whose isolate cannot be created fails alone', async () => {
    const { engine } = await setup({ faults: { b: 'fail-isolate' } });
    const results = await engine.run([busy('a', 10, 'busy_exclusive'), busy('b', 10, 'busy_exclusive'), busy('c', 10, 'busy_exclusive')]);
    expect(codes(results)).toEqual(['ok', 'SANDBOX_CRASH', 'ok']);
    expect((results[1] as ToolFailure).error.message).toContain('could not create an isolate');
    expect(codes(await engine.run([busy('x')]))).toEqual(['ok']);
  });

  it('an approver that throws and an observer that throws cost only the gated call', async () => {
    const { engine } = await setup({ approver: () => { throw new Error('approval service down'); } });
    const results = await engine.run([busy('a'), { id: 'w', name: 'whoami', arguments: '{}' }, busy('c')]);
    expect(codes(results)).toEqual(['ok', 'APPROVAL_UNAVAILABLE', 'ok']);
    expect((results[1] as ToolFailure).error.message).toContain('approval service down');
  });
});

describe('tenants sharing one sandbox', () => {
  it('interleaved tenants with warm realms each see only their own state', async () => {
    const { engine } = await setup({ realm: 'warm', threads: 1 });
    const tenants = Array.from({ length: 12 }, (_, i) => `tenant-${i}`);
    const order = [...tenants, ...tenants.slice().reverse(), ...tenants];
    const seen = new Map<string, number[]>();
    for (const tenant of order) {
      const [result] = await engine.run([{ id: tenant, name: 'whoami', arguments: '{}' }], { tenant });
      const value = (result as unknown as { value: { tenant: string; seen: number } }).value;
      expect(value.tenant).toBe(tenant);
      seen.set(tenant, [...(seen.get(tenant) ?? []), value.seen]);
    }
    // Each tenant counts 1, 2, 3 in its own realm: no tenant ever observed another's calls.
    for (const tenant of tenants) expect(seen.get(tenant)).toEqual([1, 2, 3]);
  });
});
