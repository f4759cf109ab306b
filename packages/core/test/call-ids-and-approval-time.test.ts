// Results and tool messages are keyed by call id: a repeated id in one turn is refused for
// every call after the first. Time waiting for a person is reported apart from durationMs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openaiChat, type ToolFailure } from '../src/index.js';
import { call, deferred, engine, tool } from './helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('duplicate call ids in one turn', () => {
  it('the first call with an id runs; every later one is INVALID_ARGS saying why', async () => {
    const body = vi.fn((args: { id?: string }) => args.id ?? null);
    const e = engine([tool('t', { execute: body, isConcurrencySafe: () => true }), tool('u', { execute: body })]);
    const results = await e.run([
      call('t', { id: 'first' }, 'a'),
      call('u', { id: 'second' }, 'b'),
      call('t', { id: 'again' }, 'a'),
      call('u', { id: 'third' }, 'a'),
      call('t', { id: 'fourth' }, 'c'),
    ]);
    expect(results.map((result) => [result.callId, result.isError])).toEqual([['a', false], ['b', false], ['a', true], ['a', true], ['c', false]]);
    expect(body.mock.calls.map(([args]) => args.id)).toEqual(['first', 'second', 'fourth']);
    for (const index of [2, 3]) {
      const { error } = results[index] as ToolFailure;
      expect(error.code).toBe('INVALID_ARGS');
      expect(error.message).toContain('call id "a" is already used by an earlier call in this turn');
    }
  });

  it('ids are per turn: the next turn may reuse them', async () => {
    const e = engine([tool('t')]);
    expect((await e.run([call('t', {}, 'x')]))[0]!.isError).toBe(false);
    expect((await e.run([call('t', {}, 'x')]))[0]!.isError).toBe(false);
  });

  it('a repeated id is refused even when the first call with it failed to parse', async () => {
    const results = await engine([tool('t')]).run([call('nope', {}, 'dup'), call('t', {}, 'dup')]);
    expect(results.map((result) => (result as ToolFailure).error?.code)).toEqual(['UNKNOWN_TOOL', 'INVALID_ARGS']);
    // Never "the earlier call runs": it may have failed, and the model reads this.
    expect((results[1] as ToolFailure).error.message).toBe('t: call id "dup" is already used by an earlier call in this turn, which keeps it (answered on its own); this one did not run: re-issue it under an id of its own');
  });

  it('the provider message keeps one entry per call, in order', async () => {
    const results = await engine([tool('t')]).run([call('t', {}, 'a'), call('t', {}, 'a')]);
    const messages = openaiChat.toolMessages(results);
    expect(messages).toHaveLength(2);
    expect(String((messages[1] as { content: string }).content)).toContain('INVALID_ARGS');
  });
});

describe('approval time', () => {
  it('is reported as approvalMs and not counted in durationMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const answer = deferred<boolean>();
    const e = engine([tool('t')], { policy: { default: 'ask' }, approver: () => answer.promise });
    const pending = e.run([call('t', {}, 'slow')]);
    await vi.advanceTimersByTimeAsync(4000);
    answer.resolve(true);
    const [result] = await pending;
    expect(result!.isError).toBe(false);
    expect(result!.approvalMs).toBeGreaterThanOrEqual(4000);
    expect(result!.durationMs).toBeLessThan(4000);
  });

  it('is reported for a refusal too, and is absent when nobody was asked', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const e = engine([tool('t'), tool('free')], { policy: { default: 'ask', rules: [{ tool: 'free', decision: 'allow' }] }, approver: () => new Promise((resolve) => setTimeout(() => resolve(false), 2500)) });
    const pending = e.run([call('t', {}), call('free', {})]);
    await vi.advanceTimersByTimeAsync(2500);
    const [asked, free] = await pending;
    expect((asked as ToolFailure).error.code).toBe('PERMISSION_DENIED');
    expect(asked!.approvalMs).toBeGreaterThanOrEqual(2500);
    expect(asked!.durationMs).toBeLessThan(2500);
    expect(free!).not.toHaveProperty('approvalMs');
  });
});
