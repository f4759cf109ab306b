// A sandboxed call cancelled while it still waits (at the tenant gate for a thread, or in the
// pool for a worker) never started: it is ABORTED_BEFORE_DISPATCH, in both sandbox modes, and
// the sandbox keeps serving. Each wait is held open by a signal, never by a sleep: a call that
// holds the only thread is known to be running when its capability request reaches the host.
import { createEngine, type Engine, type ToolCallRequest, type ToolFailure, type ToolResult } from '@airlock/core';
import { createSandbox, type Capability, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Setup {
  readonly sandbox: Sandbox;
  readonly engine: Engine;
  /** Resolves when the named call's body is running in a worker (it asked the host for kv.slow). */
  readonly running: (callId: string) => Promise<void>;
  /** Resolves when the named call entered the execute stage (it may still be queued). */
  readonly entered: (callId: string) => Promise<void>;
}

async function setup(options: SandboxOptions): Promise<Setup> {
  const runningWaiters = new Map<string, () => void>();
  const enteredWaiters = new Map<string, () => void>();
  const waitFor = (waiters: Map<string, () => void>, callId: string): Promise<void> => new Promise((resolve) => waiters.set(callId, resolve));
  const capabilities: Record<string, Capability> = {
    // Never answers: the call holds its worker until it is cancelled.
    'kv.slow': (_argument, context) => {
      runningWaiters.get(context.callId)?.();
      return new Promise(() => undefined);
    },
  };
  const dir = await pluginFolder('plugins/capabilities.js', { name: 'caps', capabilities: ['kv.slow'], limits: { timeoutMs: 20_000, cpuMs: 1000 } });
  const sandbox = createSandbox({ ...options, capabilities });
  cleanups.push(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });
  await sandbox.loadPlugins([dir]);
  const engine = createEngine({
    tools: sandbox.tools(),
    policy: { default: 'allow' },
    observers: { onStage: ({ callId, stage }) => stage === 'execute' && enteredWaiters.get(callId)?.() },
  });
  return { sandbox, engine, running: (callId) => waitFor(runningWaiters, callId), entered: (callId) => waitFor(enteredWaiters, callId) };
}

const call = (id: string, name = 'waiting'): ToolCallRequest => ({ id, name, arguments: '{}' });
const code = (result: ToolResult | undefined): string => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error.code : 'ok');

/** A tenant whose shard differs from the given one's. */
function tenantBeside(sandbox: Sandbox, other: string): string {
  for (let i = 0; ; i += 1) if (sandbox.shardOf(`t${i}`) !== sandbox.shardOf(other)) return `t${i}`;
}

for (const mode of ['process', 'in-process'] as const) {
  describe(`cancelled before dispatch (${mode} mode)`, () => {
    it('a call made after close() was not run: ABORTED_BEFORE_DISPATCH, not a crash to retry', async () => {
      const { sandbox, engine } = await setup({ mode, threads: 1, ...(mode === 'process' ? { processes: 1 } : {}) });
      await sandbox.close();
      const [result] = await engine.run([call('late')], { tenant: 't' });
      expect(code(result)).toBe('ABORTED_BEFORE_DISPATCH');
      expect((result as ToolFailure).error.message).toContain('the sandbox is closed');
    });

    it('a call cancelled while queued at the tenant gate is ABORTED_BEFORE_DISPATCH; the running one is ABORTED', async () => {
      // One thread, no reserve: while `holder` runs, `queued` waits at the gate.
      const { engine, running, entered } = await setup({ mode, threads: 1, fairShare: { reserveThreads: 0 }, ...(mode === 'process' ? { processes: 1 } : {}) });
      const controller = new AbortController();
      const holderRuns = running('holder');
      const holder = engine.run([call('holder')], { tenant: 't', signal: controller.signal });
      await holderRuns;
      const queuedEntered = entered('queued');
      const queued = engine.run([call('queued')], { tenant: 't', signal: controller.signal });
      await queuedEntered;
      controller.abort();
      const [queuedResult] = await queued;
      expect(code(queuedResult)).toBe('ABORTED_BEFORE_DISPATCH');
      expect((queuedResult as ToolFailure).error.message).toMatch(/before it started|while waiting for a sandbox thread/);
      expect(code((await holder)[0])).toBe('ABORTED');
      expect(code((await engine.run([call('after', 'probe')], { tenant: 't' }))[0])).toBe('ok');
    });

    it('a call cancelled while queued in the pool for a worker is ABORTED_BEFORE_DISPATCH', async () => {
      // In process mode the pool is a shard whose process has not started yet (plugins loaded on
      // another); in-process, the pool starts two workers, both held, and the reserve's third is
      // still starting.
      const { sandbox, engine, running, entered } = await setup(mode === 'process' ? { mode, threads: 1, processes: 2 } : { mode, threads: 2 });
      const tenant = mode === 'process' ? tenantBeside(sandbox, 'default') : 'b';
      const holder = new AbortController();
      let held: Promise<ToolResult[]> | undefined;
      if (mode === 'in-process') {
        const holdersRun = Promise.all([running('holder-1'), running('holder-2')]);
        // Two turns (a turn runs its exclusive calls one after another).
        held = Promise.all(['holder-1', 'holder-2'].map((id) => engine.run([call(id)], { tenant: 'a', signal: holder.signal }))).then((turns) => turns.flat());
        await holdersRun;
      }
      const controller = new AbortController();
      const queuedEntered = entered('queued');
      const queued = engine.run([call('queued')], { tenant, signal: controller.signal });
      await queuedEntered;
      // Admission grants this call a thread (the reserve, or its own shard's) within microtasks;
      // by the next turn of the event loop it waits in the pool, whose worker is not ready.
      await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      expect(code((await queued)[0])).toBe('ABORTED_BEFORE_DISPATCH');
      holder.abort();
      if (held !== undefined) expect((await held).map(code)).toEqual(['ABORTED', 'ABORTED']);
      expect(code((await engine.run([call('after', 'probe')], { tenant }))[0])).toBe('ok');
    });
  });
}

// A running call cancelled by its caller is stopped by its worker (its isolate disposed), not
// by terminating the worker: a worker terminated inside an isolated-vm call can abort its
// process, and a tenant cancelling its own calls in a loop once took its neighbours down so.
for (const mode of ['process', 'in-process'] as const) {
  it(`a running call cancelled is ABORTED and its worker keeps serving: another tenant's warm realm there survives (${mode} mode)`, async () => {
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const capabilities: Record<string, Capability> = {
      'kv.slow': () => {
        running();
        return new Promise(() => undefined);
      },
    };
    const dir = await pluginFolder('plugins/count-and-wait.js', { name: 'counter', realm: 'warm', capabilities: ['kv.slow'], limits: { timeoutMs: 20_000, cpuMs: 1000 } });
    const sandbox = createSandbox({ mode, threads: 1, ...(mode === 'process' ? { processes: 1 } : {}), fairShare: { reserveThreads: 0 }, capabilities });
    cleanups.push(async () => {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    });
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    const value = async (tenant: string): Promise<unknown> => ((await engine.run([call(`n-${tenant}`, 'count')], { tenant }))[0] as unknown as { value: unknown }).value;
    expect(await value('w')).toBe(1);
    const controller = new AbortController();
    const waiting = engine.run([call('c1', 'wait')], { tenant: 'c', signal: controller.signal });
    await started;
    controller.abort();
    expect(code((await waiting)[0])).toBe('ABORTED');
    expect(await value('w')).toBe(2);
  });
}

// A capability that answers the moment its call is cancelled (as a host capability that ends
// its work on the call's signal does): the answer races the cancel to the plugin. The engine
// lets the started call settle and answers with what the sandbox did: the plugin must not have
// gone on with the answer and finished behind its caller's back (that would be 'ok').
for (const mode of ['process', 'in-process'] as const) {
  it(`a capability answer that races the cancel never reaches the plugin: the call is stopped, not finished (${mode} mode)`, async () => {
    let running: () => void = () => undefined;
    const capabilities: Record<string, Capability> = {
      'kv.slow': (_argument, context) => {
        running();
        return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve('answered'), { once: true }));
      },
    };
    const dir = await pluginFolder('plugins/count-and-wait.js', { name: 'counter', capabilities: ['kv.slow'], limits: { timeoutMs: 20_000, cpuMs: 1000 } });
    const sandbox = createSandbox({ mode, threads: 1, ...(mode === 'process' ? { processes: 1 } : {}), capabilities });
    cleanups.push(async () => {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    });
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    for (let round = 0; round < 5; round += 1) {
      const started = new Promise<void>((resolve) => (running = resolve));
      const controller = new AbortController();
      const waiting = engine.run([call(`c${round}`, 'wait')], { tenant: 'c', signal: controller.signal });
      await started;
      controller.abort();
      // The started call is let settle: 'ok' would mean the plugin took the answer and returned.
      expect(code((await waiting)[0])).toBe('ABORTED');
    }
  });
}
