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

  it('a cancelled turn stops a running sandboxed call and the sandbox keeps serving', async () => {
    const h = await harness('plugins/busy.js', { cpuMs: 5000, timeoutMs: 10_000 });
    open = h;
    const controller = new AbortController();
    const engine = createEngine({
      tools: h.sandbox.tools(),
      policy: { default: 'allow' },
      observers: { onStage: ({ stage }) => stage === 'execute' && setImmediate(() => controller.abort()) },
    });
    const started = performance.now();
    const [result, unstarted] = await engine.run([busy('long', 4000, 'busy_exclusive'), busy('never', 10, 'busy_exclusive')], { signal: controller.signal });
    expect(codeOf(result!)).toBe('ABORTED');
    expect(codeOf(unstarted!)).toBe('ABORTED_BEFORE_DISPATCH');
    expect(performance.now() - started).toBeLessThan(3000);
    const { results } = await h.call('busy', { ms: 5 });
    expect(codeOf(results[0]!)).toBe('ok');
  });
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
