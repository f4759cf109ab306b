// Kills the sandbox child process in the middle of a batch: every call still gets
// exactly one result, and the next batch succeeds on a fresh child.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolFailure, ToolResult, ToolCallRequest } from '@airlock/core';
import { createEngine } from '@airlock/core';
import { sandboxProcessIds } from '@airlock/sandbox/testing';
import { harness, type Harness } from './support/plugin-harness.js';

let open: Harness | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const busy = (tag: string, ms: number, tool = 'busy'): ToolCallRequest => ({ id: tag, name: tool, arguments: JSON.stringify({ ms, tag }) });
const codeOf = (result: ToolResult) => (result.isError ? (result as ToolFailure).error.code : 'ok');

describe('fault injection: the sandbox process dies mid-batch', () => {
  it('in-flight calls become SANDBOX_CRASH, later calls run on a respawned child, the next batch succeeds', async () => {
    // A lone tenant fills every thread: with 3, all three parallel calls are in flight at once.
    // One process, so the kill below is the one hosting them.
    const h = await harness('plugins/busy.js', { cpuMs: 5000, timeoutMs: 10_000 }, { threads: 3, processes: 1 });
    open = h;
    const [firstPid] = sandboxProcessIds(h.sandbox);
    expect(firstPid).toBeGreaterThan(0);

    let killed = false;
    const engine = createEngine({
      tools: h.sandbox.tools(),
      policy: { default: 'allow' },
      preSchedule: h.sandbox.preSchedule,
      observers: {
        // The explicit signal: the first parallel call has been dispatched to the sandbox.
        onStage: ({ callId, stage }) => {
          if (!killed && stage === 'execute' && callId === 'a') {
            killed = true;
            setImmediate(() => process.kill(firstPid!, 'SIGKILL'));
          }
        },
      },
    });
    const batch = [busy('a', 1500), busy('b', 1500), busy('c', 1500), busy('barrier', 10, 'busy_exclusive'), busy('after', 10)];
    const results = await engine.run(batch);

    expect(results.map((r) => r.callId)).toEqual(['a', 'b', 'c', 'barrier', 'after']);
    expect(results.slice(0, 3).map(codeOf)).toEqual(['SANDBOX_CRASH', 'SANDBOX_CRASH', 'SANDBOX_CRASH']);
    expect((results[0] as ToolFailure).error.message).toMatch(/sandbox process was killed by SIGKILL/);
    expect(results.slice(3).map(codeOf)).toEqual(['ok', 'ok']);

    const [secondPid] = sandboxProcessIds(h.sandbox);
    expect(secondPid).not.toBe(firstPid);
    const next = await engine.run([busy('x', 10), busy('y', 10), busy('z', 10, 'busy_exclusive')]);
    expect(next.map(codeOf)).toEqual(['ok', 'ok', 'ok']);
  });

  for (const mode of ['process', 'in-process'] as const) {
    it(`a cancelled turn stops the running body (${mode} mode): its late answer comes long before the body would end, and the one thread serves the next call`, async () => {
      const BODY_MS = 20_000;
      let announce!: () => void;
      const bodyStarted = new Promise<void>((resolve) => (announce = resolve));
      // One worker thread in all (no reserve), so the next call can run only where the body ran.
      const h = await harness('plugins/announced.js', { cpuMs: 30_000, timeoutMs: 40_000 }, {
        mode,
        threads: 1,
        fairShare: { reserveThreads: 0 },
        ...(mode === 'process' ? { processes: 1 } : {}),
        capabilities: { started: () => (announce(), null) },
        manifest: { capabilities: ['started'] },
      });
      open = h;
      const engine = createEngine({ tools: h.sandbox.tools(), policy: { default: 'allow' } });
      const controller = new AbortController();
      const turn = engine.run([{ id: 'long', name: 'announced_spin', arguments: JSON.stringify({ ms: BODY_MS }) }, { id: 'never', name: 'quick', arguments: '{}' }], { signal: controller.signal });
      // The signal: the body asked the host for `started`, so it is running in the one worker.
      await bodyStarted;
      const abortedAt = performance.now();
      controller.abort();
      const [result, unstarted] = await turn;
      expect(codeOf(result!)).toBe('ABORTED');
      expect(codeOf(unstarted!)).toBe('ABORTED_BEFORE_DISPATCH');
      // The started call is let settle, and it settled because the sandbox stopped the body, not because the body ended.
      expect(performance.now() - abortedAt).toBeLessThan(BODY_MS / 4);
      const [next] = await engine.run([{ id: 'next', name: 'quick', arguments: '{}' }]);
      expect(codeOf(next!)).toBe('ok');
      expect(performance.now() - abortedAt).toBeLessThan(BODY_MS / 4);
    });
  }
});

describe('tenants', () => {
  it('a warm realm is per tenant: one tenant never sees another\'s globals', async () => {
    const h = await harness('plugins/busy.js', {}, { threads: 1, manifest: { realm: 'warm' } });
    open = h;
    const a1 = await h.call('whoami', {}, 'acme');
    const a2 = await h.call('whoami', {}, 'acme');
    const b1 = await h.call('whoami', {}, 'globex');
    expect(a1.results[0]).toMatchObject({ value: { tenant: 'acme', seen: 1 } });
    expect(a2.results[0]).toMatchObject({ value: { tenant: 'acme', seen: 2 } });
    expect(b1.results[0]).toMatchObject({ value: { tenant: 'globex', seen: 1 } });
  });

  it('a fresh realm (the default) keeps nothing between calls of the same tenant', async () => {
    const h = await harness('plugins/busy.js', {}, { threads: 1 });
    open = h;
    await h.call('whoami', {}, 'acme');
    const again = await h.call('whoami', {}, 'acme');
    expect(again.results[0]).toMatchObject({ value: { tenant: 'acme', seen: 1 } });
  });
});
