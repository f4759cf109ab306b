import { describe, expect, it, vi } from 'vitest';
import { type AnyTool, type ToolFailure } from '../src/index.js';
import { call, deferred, engine, tool } from './helpers.js';

/** A tool whose calls block until the test releases them, recording start order and concurrency. */
function gatedTool(name: string, classify: AnyTool['isConcurrencySafe']) {
  const log: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred<null>>>();
  const started = new Map<string, ReturnType<typeof deferred<void>>>();
  let running = 0;
  let peak = 0;
  const gate = (id: string) => {
    if (!gates.has(id)) gates.set(id, deferred<null>());
    return gates.get(id)!;
  };
  const startSignal = (id: string) => {
    if (!started.has(id)) started.set(id, deferred());
    return started.get(id)!;
  };
  const definition = tool(name, {
    ...(classify === undefined ? {} : { isConcurrencySafe: classify }),
    execute: async (args) => {
      const id = String(args.id);
      running += 1;
      peak = Math.max(peak, running);
      log.push(`start ${id}`);
      startSignal(id).resolve();
      await gate(id).promise;
      running -= 1;
      log.push(`end ${id}`);
      return id;
    },
  });
  return { definition, log, release: (id: string) => gate(id).resolve(null), started: (id: string) => startSignal(id).promise, peak: () => peak, running: () => running };
}

describe('classification', () => {
  it.each([
    ['literal true', () => true, 'parallel'],
    ['truthy 1', () => 1 as never, 'exclusive'],
    ['"true"', () => 'true' as never, 'exclusive'],
    ['a throw', () => { throw new Error('x'); }, 'exclusive'],
    ['missing', undefined, 'exclusive'],
  ])('%s is %s', async (_case, classify, expected) => {
    const g = gatedTool('t', classify as AnyTool['isConcurrencySafe']);
    const pending = engine([g.definition]).run([call('t', { id: 'a' }), call('t', { id: 'b' })]);
    await g.started('a');
    await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    // Parallel calls are both running before either is released; exclusive ones are not.
    expect(g.running()).toBe(expected === 'parallel' ? 2 : 1);
    g.release('a');
    g.release('b');
    await pending;
  });
});

describe('groups and barriers', () => {
  it('parallel, exclusive, parallel runs as three groups', async () => {
    const p = gatedTool('p', () => true);
    const x = gatedTool('x', () => false);
    const log: string[] = [];
    const record = (prefix: string, g: ReturnType<typeof gatedTool>) => ({ ...g.definition, execute: async (args: never, exec: never) => { log.push(`start ${prefix}${(args as { id: string }).id}`); const v = await g.definition.execute(args, exec); log.push(`end ${prefix}${(args as { id: string }).id}`); return v; } });
    const pending = engine([record('p', p) as AnyTool, record('x', x) as AnyTool]).run([
      call('p', { id: '1' }), call('p', { id: '2' }), call('x', { id: '3' }), call('p', { id: '4' }), call('p', { id: '5' }),
    ]);
    await p.started('1');
    await p.started('2');
    expect(log).toEqual(['start p1', 'start p2']);
    p.release('2');
    p.release('1');
    await x.started('3');
    expect(log.slice(2)).toEqual(['end p2', 'end p1', 'start x3']);
    x.release('3');
    await p.started('4');
    await p.started('5');
    expect(log.slice(5)).toEqual(['end x3', 'start p4', 'start p5']);
    p.release('4');
    p.release('5');
    await pending;
  });

  it('the pool refills up to its cap as slots free', async () => {
    const g = gatedTool('t', () => true);
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const pending = engine([g.definition], { maxParallel: 2 }).run(ids.map((id) => call('t', { id })));
    await g.started('a');
    await g.started('b');
    expect(g.running()).toBe(2);
    g.release('a');
    await g.started('c'); // a's slot went to c at once
    expect(g.running()).toBe(2);
    g.release('c');
    await g.started('d');
    g.release('b');
    await g.started('e');
    g.release('d');
    g.release('e');
    await pending;
    expect(g.peak()).toBe(2);
  });

  it('a cap of 1 is strictly serial', async () => {
    const g = gatedTool('t', () => true);
    const pending = engine([g.definition], { maxParallel: 1 }).run(['a', 'b', 'c'].map((id) => call('t', { id })));
    for (const id of ['a', 'b', 'c']) {
      await g.started(id);
      g.release(id);
    }
    await pending;
    expect(g.peak()).toBe(1);
    expect(g.log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('results keep the model\'s order under out-of-order completion, for callers and observers', async () => {
    const g = gatedTool('t', () => true);
    const observed: string[] = [];
    const pending = engine([g.definition], { observers: { onResult: (r) => observed.push(r.callId) } }).run(['a', 'b', 'c'].map((id) => call('t', { id }, id)));
    await g.started('c');
    g.release('c');
    g.release('b');
    await new Promise((resolve) => setImmediate(resolve));
    expect(observed).toEqual([]); // c and b are done but a is not: nothing is committed out of order
    g.release('a');
    const results = await pending;
    expect(results.map((r) => r.callId)).toEqual(['a', 'b', 'c']);
    expect(observed).toEqual(['a', 'b', 'c']);
  });
});

describe('cancelling a turn', () => {
  it('a mid-batch abort gives unstarted calls ABORTED_BEFORE_DISPATCH and started ones ABORTED', async () => {
    const g = gatedTool('t', () => true);
    const body = vi.fn(() => null);
    const barrier = tool('x', { execute: body });
    const cancellable = {
      ...g.definition,
      execute: (args: never, exec: { signal: AbortSignal }) =>
        new Promise((resolve, reject) => {
          exec.signal.addEventListener('abort', () => reject(new Error('cancelled')));
          void (g.definition.execute as (a: never, e: never) => Promise<unknown>)(args, exec as never).then((value) => resolve(value as never));
        }),
    } as unknown as AnyTool;
    const controller = new AbortController();
    const pending = engine([cancellable, barrier], { maxParallel: 2 }).run(
      [call('t', { id: 'a' }), call('t', { id: 'b' }), call('t', { id: 'c' }), call('x'), call('t', { id: 'd' })],
      { signal: controller.signal },
    );
    await g.started('a');
    await g.started('b');
    controller.abort();
    const results = await pending;
    expect(results).toHaveLength(5);
    expect(results.map((r) => (r as ToolFailure).error?.code)).toEqual(['ABORTED', 'ABORTED', 'ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH']);
    expect(body).not.toHaveBeenCalled();
  });

  it('a preSchedule that throws synchronously, and calls whose fields cannot be read, still end in one result each', async () => {
    const hostile = { id: 'bad', get name(): string { throw new Error('getter'); }, arguments: '{}' };
    const results = await engine([tool('t')], { preSchedule: () => { throw new Error('sync failure'); } }).run([call('t', {}, 'ok'), hostile as never]);
    expect(results.map((r) => (r.isError ? r.error.code : 'ok'))).toEqual(['ok', 'INVALID_ARGS']);
    expect(results[1]!.callId).toBe('bad');
  });

  it('every call gets exactly one result even when preSchedule and observers throw', async () => {
    const results = await engine([tool('t')], {
      preSchedule: () => Promise.reject(new Error('classifier host down')),
      observers: { onResult: () => { throw new Error('x'); } },
    }).run([call('t'), call('nope'), call('t', '{')]);
    expect(results.map((r) => r.isError)).toEqual([false, true, true]);
  });
});

describe('preSchedule sees only calls the policy allows outright', () => {
  // A sandboxed classifier runs plugin code with a call's arguments: a call the gate will stop
  // (denied, or waiting for approval) must never show them to its plugin.
  it('calls denied by tool or by argument, and calls that need approval, are left out; the gate still answers them', async () => {
    const seen: string[] = [];
    const subject = engine([tool('read'), tool('upload'), tool('write'), tool('publish')], {
      policy: {
        default: 'allow',
        rules: [
          { tool: 'upload', decision: 'deny' },
          { tool: 'write', when: { path: '/etc/**' }, decision: 'deny' },
          { tool: 'publish', decision: 'ask' },
        ],
      },
      preSchedule: async (calls) => {
        for (const parsed of calls) seen.push(parsed.callId);
      },
    });
    const results = await subject.run([
      call('read', { id: 'r' }, 'r1'),
      call('upload', { id: 'card 4111' }, 'u1'),
      call('write', { path: '/etc/shadow' }, 'w1'),
      call('write', { path: '/tmp/ok' }, 'w2'),
      call('publish', { id: 'p' }, 'p1'),
      call('read', '{not json', 'bad'),
    ]);
    expect(seen).toEqual(['r1', 'w2']);
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['ok', 'PERMISSION_DENIED', 'PERMISSION_DENIED', 'ok', 'APPROVAL_UNAVAILABLE', 'INVALID_ARGS']);
  });
});
