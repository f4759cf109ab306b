// Failures the pipeline contains (a preSchedule hook, the scheduler, an observer) still
// leave every call with its result, and reach the onError observer as structured errors.
import { describe, expect, it, vi } from 'vitest';
import { AirlockError, createEngine, ToolRegistry, type AnyTool, type ContainedErrorContext, type RegisteredTool } from '../src/index.js';
import { call, engine, tool } from './helpers.js';

function recorder() {
  const seen: { error: AirlockError; context: ContainedErrorContext }[] = [];
  return { seen, onError: (error: AirlockError, context: ContainedErrorContext) => void seen.push({ error, context }) };
}

describe('onError', () => {
  it('a preSchedule hook that rejects is reported with its cause, and the turn still runs', async () => {
    const errors = recorder();
    const cause = new Error('classifier host down');
    const results = await engine([tool('t')], { preSchedule: () => Promise.reject(cause), observers: { onError: errors.onError } }).run([call('t')], { tenant: 'acme' });
    expect(results[0]?.isError).toBe(false);
    expect(errors.seen).toHaveLength(1);
    const [{ error, context }] = errors.seen as [{ error: AirlockError; context: ContainedErrorContext }];
    expect(AirlockError.isInstance(error)).toBe(true);
    expect(error.code).toBe('PRESCHEDULE_FAILED');
    expect(error.cause).toBe(cause);
    expect(context).toEqual({ source: 'preSchedule', tenant: 'acme' });
    expect(error.details).toEqual(context);
  });

  it('a preSchedule hook that throws synchronously is reported too', async () => {
    const errors = recorder();
    await engine([tool('t')], { preSchedule: () => { throw new TypeError('sync'); }, observers: { onError: errors.onError } }).run([call('t')]);
    expect(errors.seen.map(({ error }) => error.code)).toEqual(['PRESCHEDULE_FAILED']);
  });

  it('an observer that throws is reported, naming the observer and the call', async () => {
    const errors = recorder();
    const results = await engine([tool('t')], {
      observers: { onResult: () => { throw new Error('dashboard bug'); }, onError: errors.onError },
    }).run([call('t', {}, 'c1')]);
    expect(results[0]?.isError).toBe(false);
    expect(errors.seen).toHaveLength(1);
    expect(errors.seen[0]?.error.code).toBe('OBSERVER_FAILED');
    expect(errors.seen[0]?.error.message).toContain('dashboard bug');
    expect(errors.seen[0]?.context).toEqual({ source: 'observer', observer: 'onResult', callId: 'c1', tenant: undefined });
  });

  it('a stage that fails unexpectedly is a TOOL_ERROR result and a SCHEDULER_FAILED report', async () => {
    const errors = recorder();
    // A definition whose deadline cannot even be read: the execute stage throws outside the body.
    class BrokenRegistry extends ToolRegistry {
      override get(name: string): RegisteredTool | undefined {
        const real = super.get(name);
        if (real === undefined) return undefined;
        const definition = Object.create(real.definition, { timeoutMs: { get: () => { throw new Error('broken definition'); } } }) as AnyTool;
        return { definition, validateArgs: real.validateArgs, validateOutput: real.validateOutput };
      }
    }
    const registry = new BrokenRegistry();
    registry.register(tool('t'));
    const results = await createEngine({ registry, policy: { default: 'allow' }, observers: { onError: errors.onError } }).run([call('t', {}, 'c1')]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR' } });
    expect(errors.seen.map(({ error, context }) => [error.code, context.source, context.callId])).toEqual([['SCHEDULER_FAILED', 'scheduler', 'c1']]);
    expect((errors.seen[0]?.error.cause as Error).message).toBe('broken definition');
  });

  it('an onError that throws breaks nothing', async () => {
    const onError = vi.fn(() => { throw new Error('logger down'); });
    const results = await engine([tool('t')], { preSchedule: () => Promise.reject(new Error('x')), observers: { onError, onStage: () => { throw new Error('y'); } } }).run([call('t'), call('t')]);
    expect(results.map((result) => result.isError)).toEqual([false, false]);
    expect(onError).toHaveBeenCalled();
  });

  it('a preparation stopped by the turn\'s own cancellation is not reported', async () => {
    const errors = recorder();
    const controller = new AbortController();
    const results = await engine([tool('t')], {
      preSchedule: (_calls, turn) => new Promise((_, reject) => {
        turn.signal.addEventListener('abort', () => reject(new Error('cancelled while classifying')), { once: true });
        controller.abort();
      }),
      observers: { onError: errors.onError },
    }).run([call('t')], { signal: controller.signal });
    expect(results[0]).toMatchObject({ isError: true, error: { code: 'ABORTED_BEFORE_DISPATCH' } });
    expect(errors.seen).toEqual([]);
  });

  it('without an onError, contained failures stay silent and every call is answered', async () => {
    const results = await engine([tool('t')], { preSchedule: () => Promise.reject(new Error('x')) }).run([call('t')]);
    expect(results[0]?.isError).toBe(false);
  });
});
