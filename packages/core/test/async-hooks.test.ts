// Hooks typed to answer synchronously can still be written `async`. Their promises are never
// awaited, so a rejection must be handled by the engine: unhandled, Node's default ends the
// embedding process, and every tenant's turns with it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine, type AirlockError, type PermissionPolicy, type ToolFailure } from '../src/index.js';
import { call, deferred, engine, tool } from './helpers.js';

const unhandled: unknown[] = [];
const record = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', record);
});
afterEach(() => {
  process.off('unhandledRejection', record);
});

/** Node reports an unhandled rejection once the microtasks of the tick that made it have run. */
const afterRejectionsWouldBeReported = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const rejecting = (what: string) => async (): Promise<never> => {
  throw new Error(`async ${what} failed`);
};

describe('async hooks that reject', () => {
  it('an async onResult or onStage that rejects is reported to onError as OBSERVER_FAILED with its cause', async () => {
    const reported = deferred<AirlockError[]>();
    const errors: AirlockError[] = [];
    const onError = (error: AirlockError): void => {
      errors.push(error);
      if (errors.length === 2) reported.resolve(errors);
    };
    const onStage = ({ stage }: { stage: string }): unknown => (stage === 'execute' ? rejecting('onStage')() : undefined);
    await engine([tool('t')], { observers: { onResult: rejecting('onResult'), onStage, onError } }).run([call('t', {}, 'c1')]);
    const [first, second] = await reported.promise;
    expect([first, second].map((error) => [error!.code, error!.details?.observer, (error!.cause as Error).message]).sort()).toEqual([
      ['OBSERVER_FAILED', 'onResult', 'async onResult failed'],
      ['OBSERVER_FAILED', 'onStage', 'async onStage failed'],
    ]);
    await afterRejectionsWouldBeReported();
    expect(unhandled).toEqual([]);
  });

  it.each<[string, object, object]>([
    ['onError', { observers: { onResult: rejecting('onResult'), onError: rejecting('onError') } }, {}],
    ['isConcurrencySafe', {}, { isConcurrencySafe: rejecting('isConcurrencySafe') }],
    ['projectContent', {}, { projectContent: rejecting('projectContent') }],
    ['finalizeContent', {}, { finalizeContent: rejecting('finalizeContent') }],
  ])('an async %s that rejects leaves no unhandled rejection', async (_name, options, fields) => {
    const results = await engine([tool('t', fields as never)], options as never).run([call('t'), call('t')]);
    expect(results).toHaveLength(2);
    await afterRejectionsWouldBeReported();
    expect(unhandled).toEqual([]);
  });

  it('an async custom policy denies (no decision), hides nothing, and leaves no unhandled rejection', async () => {
    const policy = { decide: rejecting('decide'), deniesOutright: rejecting('deniesOutright') } as unknown as PermissionPolicy;
    const asyncEngine = createEngine({ tools: [tool('t')], policy });
    const [result] = await asyncEngine.run([call('t'), call('nope')]);
    expect((result as ToolFailure).error).toEqual({ code: 'PERMISSION_DENIED', message: 't: denied (the policy gave no decision)' });
    expect(asyncEngine.tools('openai', { tenant: 'acme' })).toHaveLength(1);
    await afterRejectionsWouldBeReported();
    expect(unhandled).toEqual([]);
  });

  it('an async presentCall or presentResult gets the generic card and leaves no unhandled rejection', async () => {
    const presented = engine([tool('t', { presentCall: rejecting('presentCall'), presentResult: rejecting('presentResult') } as never)]);
    const [result] = await presented.run([call('t')]);
    expect(presented.presentCall('t', {}).title).toBe('t');
    expect(presented.presentResult({}, result!).title).toBe('t succeeded');
    await afterRejectionsWouldBeReported();
    expect(unhandled).toEqual([]);
  });
});
