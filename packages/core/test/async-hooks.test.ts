// Hooks typed to answer synchronously can still be written `async`. Their promises are never
// awaited, so a rejection must be handled by the engine: unhandled, Node's default ends the
// embedding process, and every tenant's turns with it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEngine, defineTool, type AirlockError, type PermissionPolicy, type ToolFailure } from '../src/index.js';
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

  it('a zod refinement that answers with a promise is awaited, on parameters and output; one that rejects is TOOL_ERROR or INVALID_TOOL_OUTPUT, never an unhandled rejection', async () => {
    const owner = z.object({ user: z.string().refine(async (user) => {
      if (user === 'bob') throw new Error('directory service down for bob');
      return user !== 'mallory';
    }, 'must be a known user') });
    const output = z.object({ ok: z.boolean().refine(async () => Promise.reject(new Error('audit service down'))) });
    const lookup = defineTool({ name: 'lookup', description: 'd', parameters: owner, execute: ({ user }) => ({ user }) });
    const audited = defineTool({ name: 'audited', description: 'd', parameters: z.object({}), output, execute: () => ({ ok: true }) });
    const results = await engine([lookup, audited]).run([call('lookup', { user: 'alice' }), call('lookup', { user: 'mallory' }), call('lookup', { user: 'bob' }), call('audited')]);
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['ok', 'INVALID_ARGS', 'TOOL_ERROR', 'INVALID_TOOL_OUTPUT']);
    expect((results[1] as ToolFailure).error.message).toBe('lookup: invalid arguments: /user: must be a known user');
    expect((results[2] as ToolFailure).error.message).toContain('directory service down for bob');
    await afterRejectionsWouldBeReported();
    expect(unhandled).toEqual([]);
  });

  it('a turn\'s zod refinements run together: each waits for all of them to start, and the turn completes', async () => {
    // Parsed one after another, the first refinement would wait for the others for good (its guardTimeoutMs).
    const everyone = deferred();
    let started = 0;
    const gated = z.object({ x: z.string().refine(async () => {
      started += 1;
      if (started === 3) everyone.resolve();
      await everyone.promise;
      return true;
    }) });
    const lookup = defineTool({ name: 'lookup', description: 'd', parameters: gated, execute: ({ x }) => x });
    const results = await createEngine({ tools: [lookup], policy: { default: 'allow' }, limits: { guardTimeoutMs: 2000 } }).run([call('lookup', { x: 'a' }, 'a'), call('lookup', { x: 'b' }, 'b'), call('lookup', { x: 'c' }, 'c')]);
    expect(results.map((result) => (result.isError ? result.error.code : result.value))).toEqual(['a', 'b', 'c']);
  });

  it('a turn cancelled while a zod refinement is still pending answers its calls at once, ABORTED_BEFORE_DISPATCH', async () => {
    const pending = deferred();
    const hang = defineTool({ name: 'hang', description: 'd', parameters: z.object({ x: z.string().refine(() => new Promise<boolean>(() => pending.resolve())) }), execute: () => 'ran' });
    const controller = new AbortController();
    const turn = engine([hang, tool('quick')]).run([call('hang', { x: 'a' }), call('quick')], { signal: controller.signal });
    await pending.promise; // the refinement is running
    controller.abort();
    const results = await turn;
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH']);
  });

  it('an async source whose tools() or policyRules() rejects is INVALID_OPTION, and leaves no unhandled rejection', async () => {
    for (const failing of [{ tools: rejecting('tools'), policyRules: () => [] }, { tools: () => [], policyRules: rejecting('policyRules') }]) {
      expect(() => createEngine({ sources: [failing as never], policy: { default: 'allow' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    }
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
