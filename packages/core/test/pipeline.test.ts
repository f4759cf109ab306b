import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PIPELINE_STAGES, ToolCallError, createEngine, createPolicy, defineTool, type ToolFailure } from '../src/index.js';
import { call, deferred, engine, tool } from './helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

const failure = (result: unknown) => result as ToolFailure;

describe('parse stage', () => {
  it('a caller\'s mistakes are AirlockErrors, and a hole in the call list is a call answered like the others', async () => {
    const e = engine([tool('t')]);
    await expect(e.run(null as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', message: 'run(calls): calls must be an array of tool calls' });
    await expect(e.run(new Set([call('t')]) as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(() => e.tools('nope' as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    await expect(e.runMessage('nope' as never, {})).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(e.run([call('t')], { signal: 'x' } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { path: 'options.signal' } });
    await expect(e.run([call('t')], { tenant: 7 } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { path: 'options.tenant' } });
    await expect(e.run([call('t')], 'acme' as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { path: 'options' } });
    // Lists and messages whose traps or getters throw: said as AirlockErrors, not their raw throws.
    const trapped = new Proxy([call('t')], { get: (target, key) => (key === '0' ? (() => { throw new Error('trap'); })() : Reflect.get(target, key)) });
    await expect(e.run(trapped)).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { path: 'calls' } });
    const unreadable = { role: 'assistant', get tool_calls() { throw new Error('getter'); } };
    await expect(e.runMessage('openai', unreadable)).rejects.toMatchObject({ code: 'INVALID_PROVIDER_MESSAGE' });
    // eslint-disable-next-line no-sparse-arrays
    const results = await e.run([, call('t', {}, 'second')] as never);
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(['INVALID_ARGS', 'ok']);
    expect(results[1]?.callId).toBe('second');
    // No id, or an empty one: answered under its position, never run.
    const body = vi.fn(() => null);
    const noIds = await engine([tool('t', { execute: body })]).run([{ name: 't', arguments: '{}' } as never, { id: '', name: 't', arguments: '{}' }]);
    expect(noIds.map((result) => [result.callId, failure(result).error.code])).toEqual([['call-0', 'INVALID_ARGS'], ['call-1', 'INVALID_ARGS']]);
    expect(body).not.toHaveBeenCalled();
    // A stand-in never takes a real call's id: each result stays filed under its own call.
    const mixed = await engine([tool('t')]).run([{ name: 't', arguments: '{}' } as never, { id: 'call-0', name: 't', arguments: '{}' }]);
    expect(mixed.map((result) => [result.callId, result.isError ? result.error.code : 'ok'])).toEqual([['call-0~', 'INVALID_ARGS'], ['call-0', 'ok']]);
  });

  it('malformed JSON is INVALID_ARGS naming the problem, not an exception', async () => {
    const [result] = await engine([tool('t')]).run([call('t', '{"id": ')]);
    expect(failure(result).error.code).toBe('INVALID_ARGS');
    expect(failure(result).error.message).toMatch(/not valid JSON/);
  });

  it('schema failures say which field and what was expected', async () => {
    const strict = tool('t', { parameters: { type: 'object', properties: { count: { type: 'integer', minimum: 1 } }, required: ['count', 'name'], additionalProperties: false } });
    const [result] = await engine([strict]).run([call('t', { count: 'three', extra: 1 })]);
    const { message, code } = failure(result).error;
    expect(code).toBe('INVALID_ARGS');
    expect(message).toContain('/count: must be integer, got string');
    expect(message).toContain('missing required property "name"');
    expect(message).toContain('unexpected property "extra"');
  });

  it('what an object inherits meets no schema: required and typed properties are its own', async () => {
    const schema = tool('t', { parameters: { type: 'object', properties: { constructor: { type: 'string' } }, required: ['constructor', 'toString'] } });
    const [missing] = await engine([schema]).run([call('t', {})]);
    expect(failure(missing).error.code).toBe('INVALID_ARGS');
    expect(failure(missing).error.message).toContain('missing required property "constructor"');
    expect(failure(missing).error.message).toContain('missing required property "toString"');
    expect(failure(missing).error.message).not.toContain('function');
    const [given] = await engine([schema]).run([call('t', { constructor: 'c', toString: 1 })]);
    expect(given?.isError).toBe(false);
    const output = tool('o', { output: { type: 'object', required: ['valueOf'] }, execute: () => ({}) });
    const [returned] = await engine([output]).run([call('o', {})]);
    expect(failure(returned).error.code).toBe('INVALID_TOOL_OUTPUT');
  });

  it('a schema declaring a property named "__proto__" is refused at registration: the validator would never check it', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"number","maximum":3}}}');
    expect(() => engine([tool('t', { parameters: schema })])).toThrow(/properties\/__proto__: a property named "__proto__" cannot be checked/);
  });

  it.each(['constructor', '__proto__', 'toString'])('"%s" is an unknown tool', async (name) => {
    const [result] = await engine([tool('t')]).run([call(name)]);
    expect(failure(result).error.code).toBe('UNKNOWN_TOOL');
    expect(failure(result).error.message).toContain('Available tools: t');
  });

  it('an unknown tool\'s answer echoes at most 128 characters of the name the model sent', async () => {
    const [result] = await engine([tool('t')]).run([call('x'.repeat(2_000_000))]);
    expect(failure(result).error.message).toBe(`no tool named "${'x'.repeat(128)}…". Available tools: t.`);
  });

  it('an unknown tool\'s answer names only the tools this tenant may call at all', async () => {
    const e = engine([tool('search'), tool('admin_drop_database')], { policy: { default: 'allow', rules: [{ tool: 'admin_*', decision: 'deny', tenants: ['acme'] }] } });
    const [acme] = await e.run([call('serch')], { tenant: 'acme' });
    expect(failure(acme).error.message).toBe('no tool named "serch". Available tools: search.');
    const [other] = await e.run([call('serch')], { tenant: 'ops' });
    expect(failure(other).error.message).toBe('no tool named "serch". Available tools: search, admin_drop_database.');
  });

  it('a turn of unknown tools asks the policy about each tool at most once, and only until the answer\'s list is full', async () => {
    const tools = Array.from({ length: 100 }, (_, index) => tool(`tool_${index}`));
    const base = createPolicy({ default: 'allow', rules: [{ tool: 'tool_1*', decision: 'deny' }] });
    let asked = 0;
    const counting = { decide: base.decide, deniesOutright: (name: string, tenant: string | undefined) => ((asked += 1), base.deniesOutright!(name, tenant)) };
    const results = await createEngine({ tools, policy: counting }).run(Array.from({ length: 200 }, (_, index) => call(`nope_${index}`)));
    // tool_1 and tool_10..19 are denied: the 21 listed come from the first 32 tools.
    const listed = ['tool_0', ...[2, 3, 4, 5, 6, 7, 8, 9].map((n) => `tool_${n}`), ...Array.from({ length: 11 }, (_, index) => `tool_${index + 20}`)];
    expect(failure(results[199]).error.message).toBe(`no tool named "nope_199". Available tools: ${listed.join(', ')}, ….`);
    expect(asked).toBeLessThanOrEqual(32);
  });

  it('oversized and over-deep arguments are INVALID_ARGS before parsing goes deep', async () => {
    const e = engine([tool('t', { parameters: { type: 'object' } })], { limits: { maxArgumentBytes: 100, maxArgumentDepth: 5 } });
    const [big, deep, deepObject] = await e.run([
      call('t', JSON.stringify({ id: 'x'.repeat(200) })),
      call('t', `{"a":${'['.repeat(20)}${']'.repeat(20)}}`),
      { id: 'o', name: 't', arguments: { a: { b: { c: { d: { e: { f: 1 } } } } } } },
    ]);
    expect(failure(big).error.message).toContain('larger than 100 bytes');
    expect(failure(deep).error.message).toContain('deeper than 5');
    expect(failure(deepObject).error.message).toContain('deeper than 5');
  });

  it('arguments that are not an object are INVALID_ARGS', async () => {
    const [result] = await engine([tool('t')]).run([call('t', '[1,2]')]);
    expect(failure(result).error.message).toContain('must be a JSON object, got an array');
  });

  it('the body receives frozen arguments', async () => {
    let frozen = false;
    const t = tool('t', { execute: (args) => ((frozen = Object.isFrozen(args)), null) });
    await engine([t]).run([call('t', { id: 'a' })]);
    expect(frozen).toBe(true);
  });
});

describe('permission gate', () => {
  const write = tool('write_file', { parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } } });
  const denyEtc = { default: 'allow' as const, rules: [{ tool: 'write_file', when: { path: '/etc/**' }, decision: 'deny' as const, reason: 'writes under /etc are not allowed' }] };

  it.each(['/etc/hosts', '/tmp/../etc/hosts', '//etc/passwd', '/etc/./shadow'])('denies %s before any code runs', async (path) => {
    const body = vi.fn(() => null);
    const e = engine([tool('write_file', { execute: body, parameters: write.parameters })], { policy: denyEtc });
    const [result] = await e.run([call('write_file', { path, text: 'x' })]);
    expect(failure(result).error).toEqual({ code: 'PERMISSION_DENIED', message: 'write_file: denied (writes under /etc are not allowed)' });
    expect(body).not.toHaveBeenCalled();
  });

  it('a denial reads as a sentence whether the reason is the operator\'s, a rule\'s or the default\'s', async () => {
    const unexplained = { default: 'deny' as const, rules: [{ tool: 'write_file', when: { path: '/etc/**' }, decision: 'deny' as const }] };
    const e = engine([write], { policy: unexplained });
    const [byRule, byDefault] = await e.run([call('write_file', { path: '/etc/hosts' }), call('write_file', { path: '/tmp/x' })]);
    expect(failure(byRule).error.message).toBe('write_file: denied (the policy rule "deny write_file when path matches /etc/**")');
    expect(failure(byDefault).error.message).toBe('write_file: denied (the policy default for "write_file" is deny)');
  });

  it('allows what no rule matches', async () => {
    const [result] = await engine([write], { policy: denyEtc }).run([call('write_file', { path: '/tmp/notes.txt' })]);
    expect(result!.isError).toBe(false);
  });

  it('the strictest matching rule wins whatever the order', async () => {
    const policy = { default: 'allow' as const, rules: [{ tool: '*', decision: 'allow' as const }, { tool: 'write_*', decision: 'deny' as const }] };
    const [result] = await engine([write], { policy }).run([call('write_file', {})]);
    expect(failure(result).error.code).toBe('PERMISSION_DENIED');
  });

  const ask = { default: 'ask' as const };
  it.each([
    ['no approver', undefined, 'APPROVAL_UNAVAILABLE', 'no approver is available'],
    ['an approver that throws', () => { throw new Error('ui crashed'); }, 'APPROVAL_UNAVAILABLE', 'the approver failed (ui crashed)'],
    ['an approver that rejects', () => Promise.reject(new Error('offline')), 'APPROVAL_UNAVAILABLE', 'the approver failed (offline)'],
    ['an approver that says no', () => false, 'PERMISSION_DENIED', 'the approver declined'],
    ['an approver that says "yes"', () => 'yes', 'PERMISSION_DENIED', 'no explicit yes (answered "yes")'],
    ['an approver that says 1', () => 1, 'PERMISSION_DENIED', 'no explicit yes (answered 1)'],
    ['an approver that answers nothing', () => undefined, 'PERMISSION_DENIED', 'no explicit yes (answered undefined)'],
  ])('ask with %s is a denial whose reason says which', async (_case, approver, code, reason) => {
    const [result] = await engine([write], { policy: ask, ...(approver ? { approver } : {}) }).run([call('write_file', {})]);
    expect(failure(result).error.code).toBe(code);
    expect(failure(result).error.message).toContain(reason);
  });

  it('an approval timeout past what a timer holds is refused: it would fire at once', () => {
    expect(() => engine([write], { policy: ask, limits: { approvalTimeoutMs: 2 ** 31 } })).toThrow(/options\.limits\.approvalTimeoutMs must be at most 2147483647/);
  });

  it('ask with an approver that never answers times out as APPROVAL_UNAVAILABLE', async () => {
    vi.useFakeTimers();
    const e = engine([write], { policy: ask, approver: () => new Promise(() => undefined), limits: { approvalTimeoutMs: 1000 } });
    const pending = e.run([call('write_file', {})]);
    await vi.advanceTimersByTimeAsync(1000);
    const [result] = await pending;
    expect(failure(result).error).toMatchObject({ code: 'APPROVAL_UNAVAILABLE', message: expect.stringContaining('did not answer within 1000 ms') });
  });

  it('a call cancelled while its approval question waits never started: ABORTED_BEFORE_DISPATCH', async () => {
    const controller = new AbortController();
    let asked!: () => void;
    const questionShown = new Promise<void>((resolve) => (asked = resolve));
    const approver = (_request: unknown, signal: AbortSignal) => new Promise<boolean>((_, reject) => {
      asked();
      signal.addEventListener('abort', () => reject(signal.reason));
    });
    const turn = engine([write], { policy: ask, approver }).run([call('write_file', { path: '/tmp/x' })], { signal: controller.signal });
    await questionShown;
    controller.abort();
    const [result] = await turn;
    expect(failure(result).error).toMatchObject({ code: 'ABORTED_BEFORE_DISPATCH', message: 'write_file: cancelled while waiting for approval' });
  });

  it('ask runs the call only on the literal true, and the approver sees the request', async () => {
    const approver = vi.fn(() => true);
    const [result] = await engine([write], { policy: ask, approver }).run([call('write_file', { path: '/tmp/x' }, 'c1')], { tenant: 'acme' });
    expect(result!.isError).toBe(false);
    expect(approver).toHaveBeenCalledWith(expect.objectContaining({ callId: 'c1', toolName: 'write_file', args: { path: '/tmp/x' }, tenant: 'acme' }), expect.any(AbortSignal));
  });
});

describe('guards', () => {
  it('a guard can deny after the policy allowed', async () => {
    const body = vi.fn(() => null);
    const [result] = await engine([tool('t', { execute: body })], { guards: [() => ({ deny: 'rate limited' })] }).run([call('t')]);
    expect(failure(result).error).toEqual({ code: 'PERMISSION_DENIED', message: 't: denied by a guard (rate limited)' });
    expect(body).not.toHaveBeenCalled();
  });

  it('no guard can allow what another denied, in any order', async () => {
    const allowish = () => ({ allow: true }) as never;
    for (const guards of [[allowish, () => ({ deny: 'no' })], [() => ({ deny: 'no' }), allowish]]) {
      const [result] = await engine([tool('t')], { guards }).run([call('t')]);
      expect(failure(result).error.code).toBe('PERMISSION_DENIED');
    }
  });

  it('a guard cannot turn a policy denial into permission', async () => {
    const [result] = await engine([tool('t')], { policy: { default: 'deny' }, guards: [() => ({ allow: true }) as never] }).run([call('t')]);
    expect(failure(result).error.code).toBe('PERMISSION_DENIED');
  });

  it('a guard that never settles does not hold a cancelled call: ABORTED_BEFORE_DISPATCH', async () => {
    const controller = new AbortController();
    let entered!: () => void;
    const guarding = new Promise<void>((resolve) => (entered = resolve));
    const body = vi.fn(() => null);
    const turn = engine([tool('t', { execute: body })], { guards: [() => (entered(), new Promise(() => undefined))] }).run([call('t')], { signal: controller.signal });
    await guarding;
    controller.abort();
    const [result] = await turn;
    expect(failure(result).error.code).toBe('ABORTED_BEFORE_DISPATCH');
    expect(body).not.toHaveBeenCalled();
  });

  it('a guard that never settles denies the call at limits.guardTimeoutMs: the call still gets its one result', async () => {
    vi.useFakeTimers();
    const body = vi.fn(() => null);
    const turn = engine([tool('t', { execute: body })], { guards: [() => new Promise(() => undefined)], limits: { guardTimeoutMs: 250 } }).run([call('t')]);
    await vi.advanceTimersByTimeAsync(250);
    const [result] = await turn;
    vi.useRealTimers();
    expect(failure(result).error).toEqual({ code: 'PERMISSION_DENIED', message: 't: denied because guard 0 did not answer within 250 ms' });
    expect(body).not.toHaveBeenCalled();
  });

  it('a preSchedule hook that never settles holds a turn nobody cancels no longer than limits.preScheduleTimeoutMs, and is reported', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let results;
    try {
      const turn = engine([tool('t')], { preSchedule: () => new Promise(() => undefined), limits: { preScheduleTimeoutMs: 400 }, observers: { onError: (error) => errors.push(error) } }).run([call('t'), call('t')]);
      await vi.advanceTimersByTimeAsync(400);
      results = await turn;
    } finally {
      vi.useRealTimers();
    }
    expect(results.map((result) => result.isError)).toEqual([false, false]);
    expect(errors).toEqual([expect.objectContaining({ code: 'PRESCHEDULE_FAILED', message: 'a preSchedule hook did not finish within 400 ms; the turn runs without its preparation' })]);
  });

  it('a preSchedule hook that never settles does not hold a cancelled turn: every call ABORTED_BEFORE_DISPATCH', async () => {
    const controller = new AbortController();
    let entered!: () => void;
    const preparing = new Promise<void>((resolve) => (entered = resolve));
    const turn = engine([tool('t')], { preSchedule: () => (entered(), new Promise(() => undefined)) }).run([call('t'), call('t')], { signal: controller.signal });
    await preparing;
    controller.abort();
    const results = await turn;
    expect(results.map((result) => failure(result).error.code)).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH']);
  });

  // A thrown Proxy whose getPrototypeOf trap throws: `instanceof` on it throws inside the catch.
  const trapped = (): unknown => new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } });
  it.each([
    ['an approver that throws', { policy: { default: 'ask' as const }, approver: () => { throw trapped(); } }, 'APPROVAL_UNAVAILABLE'],
    ['an approver that rejects', { policy: { default: 'ask' as const }, approver: () => Promise.reject(trapped()) }, 'APPROVAL_UNAVAILABLE'],
    ['a guard that throws', { guards: [() => { throw trapped(); }] }, 'PERMISSION_DENIED'],
    ['a guard that rejects', { guards: [() => Promise.reject(trapped())] }, 'PERMISSION_DENIED'],
  ])('%s a trapping Proxy still fails closed with its own code', async (_case, options, code) => {
    let ran = false;
    const [result] = await engine([defineTool({ name: 'write_file', description: 'Writes.', parameters: { type: 'object' }, execute: () => ((ran = true), 'x') })], options).run([call('write_file', {})]);
    expect(failure(result).error.code).toBe(code);
    expect(ran).toBe(false);
  });

  it('a throwing guard fails closed', async () => {
    const [result] = await engine([tool('t')], { guards: [() => { throw new Error('boom'); }] }).run([call('t')]);
    expect(failure(result).error.message).toContain('guard 0 failed (boom)');
  });

  it.each([
    ['a guard', { guards: [() => { throw new Error('ENOENT: no such file, stat \'/home/op/secrets/rules.json\'\n    at stat (node:fs:1:1)'); }] }],
    ['the policy', { policy: { decide: () => { throw new Error('cannot read /etc/airlock/policy.json'); } } }],
    ['the approver', { policy: { default: 'ask' as const }, approver: () => { throw new Error('C:\\Users\\op\\ui.js crashed'); } }],
  ])('what %s throws reaches the model without host paths or stack frames', async (_case, options) => {
    const [result] = await engine([tool('t')], options as never).run([call('t')]);
    const message = failure(result).error.message;
    expect(message).toContain('<path>');
    expect(message).not.toMatch(/home\/op|etc\/airlock|Users|node:fs| at /);
  });

  it.each([
    ['no verdict', () => undefined, 'denied (the policy gave no decision)'],
    ['a decision that is not one', () => ({ decision: 'yes', reason: 'why not' }), 'denied (the policy gave no decision)'],
    ['a verdict whose decision throws', () => ({ get decision(): string { throw new Error('boom'); } }), 'denied because the permission policy failed (boom)'],
  ])('a custom policy that returns %s denies the call, saying so (PERMISSION_DENIED, never an internal failure)', async (_case, decide, message) => {
    let ran = false;
    const [result] = await engine([tool('t', { execute: () => (ran = true) })], { policy: { decide } as never }).run([call('t')]);
    expect(failure(result).error).toEqual({ code: 'PERMISSION_DENIED', message: `t: ${message}` });
    expect(ran).toBe(false);
  });
});

describe('execute stage', () => {
  describe('cancelling a turn lets a started body settle (DESIGN.md, scheduling)', () => {
    it('a body that ignores the signal is awaited, and its own outcome is the result', async () => {
      const started = deferred();
      const finish = deferred<string>();
      const late = vi.fn();
      const pay = tool('pay', { execute: () => (started.resolve(), finish.promise) });
      const controller = new AbortController();
      let answered = false;
      const turn = engine([pay], { observers: { onLateSettlement: late } }).run([call('pay')], { signal: controller.signal }).finally(() => (answered = true));
      await started.promise;
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Not answered as cancelled while the charge is still going on.
      expect(answered).toBe(false);
      finish.resolve('CHARGED');
      const [result] = await turn;
      expect(result).toMatchObject({ isError: false, value: 'CHARGED' });
      expect(late).not.toHaveBeenCalled();
    });

    it('so does it when a wrapper replaced the signal with one made from the call\'s (AbortSignal.any): the cancel is still the caller\'s', async () => {
      const started = deferred();
      let settled = false;
      const late = vi.fn();
      const pay = tool('pay', { execute: () => (started.resolve(), new Promise((resolve) => setTimeout(() => ((settled = true), resolve('CHARGED')), 30))) });
      const withDeadline = (exec: { signal: AbortSignal }, next: (replace?: { signal?: AbortSignal }) => Promise<unknown>) => next({ signal: AbortSignal.any([exec.signal, AbortSignal.timeout(60_000)]) });
      const controller = new AbortController();
      const turn = engine([pay], { executeWrappers: [withDeadline as never], observers: { onLateSettlement: late } }).run([call('pay')], { signal: controller.signal });
      await started.promise;
      controller.abort();
      const [result] = await turn;
      expect({ settled, result }).toMatchObject({ settled: true, result: { isError: false, value: 'CHARGED' } });
      expect(late).not.toHaveBeenCalled();
    });

    it('an exclusive call of a cancelled turn has ended before the turn answers', async () => {
      let running = 0;
      let overlapped = false;
      const started = deferred();
      const pay = tool('pay', {
        execute: async () => {
          running += 1;
          if (running > 1) overlapped = true;
          started.resolve();
          await new Promise((resolve) => setTimeout(resolve, 30));
          running -= 1;
          return 'done';
        },
      });
      const e = engine([pay]);
      const controller = new AbortController();
      const first = e.run([call('pay')], { signal: controller.signal });
      await started.promise;
      controller.abort();
      await first;
      await e.run([call('pay')]);
      expect(overlapped).toBe(false);
    });

    it('a body that ignores the signal is still ended by its deadline', async () => {
      const started = deferred();
      const late = vi.fn();
      const stuck = tool('stuck', { timeoutMs: 60, execute: () => (started.resolve(), new Promise(() => undefined)) });
      const controller = new AbortController();
      const turn = engine([stuck], { observers: { onLateSettlement: late } }).run([call('stuck')], { signal: controller.signal });
      await started.promise;
      controller.abort();
      const [result] = await turn;
      expect(failure(result).error.code).toBe('ABORTED');
    });
  });

  it('a wrapper cannot detach the caller\'s cancellation', async () => {
    const started = deferred();
    let seen: AbortSignal | undefined;
    const body = tool('t', {
      execute: (_args, exec) => {
        seen = exec.signal;
        started.resolve();
        return new Promise((_, reject) => exec.signal.addEventListener('abort', () => reject(new Error('stopped'))));
      },
    });
    // The wrapper replaces the signal with one that never aborts.
    const detach = (_exec: unknown, next: (r?: { signal?: AbortSignal }) => Promise<unknown>) => next({ signal: new AbortController().signal });
    const controller = new AbortController();
    const pending = engine([body], { executeWrappers: [detach as never] }).run([call('t')], { signal: controller.signal });
    await started.promise;
    controller.abort();
    const [result] = await pending;
    expect(seen!.aborted).toBe(true);
    expect(failure(result).error.code).toBe('ABORTED');
  });

  it('a retrying wrapper whose body ran before the cancel reports ABORTED, never "cancelled before it started"', async () => {
    const started = deferred();
    const sideEffects: string[] = [];
    const transfer = tool('transfer', {
      execute: (_args, exec) => {
        sideEffects.push('debited');
        started.resolve();
        return new Promise((_, reject) => exec.signal.addEventListener('abort', () => reject(new Error('interrupted'))));
      },
    });
    // Tries again once on any failure: its second next() meets the cancelled call.
    const retry = async (_exec: unknown, next: () => Promise<unknown>) => {
      try {
        return await next();
      } catch {
        return next();
      }
    };
    const controller = new AbortController();
    const pending = engine([transfer], { executeWrappers: [retry as never] }).run([call('transfer')], { signal: controller.signal });
    await started.promise;
    controller.abort();
    const [result] = await pending;
    expect(failure(result).error).toEqual({ code: 'ABORTED', message: 'transfer: cancelled while running' });
    expect(sideEffects).toEqual(['debited']);
  });

  it('a wrapper\'s own signal ends the call when it aborts, even if the body never looks at it', async () => {
    const ignoring = tool('t', { execute: () => new Promise(() => undefined) });
    const deadline = engine([ignoring], { executeWrappers: [(_exec, next) => next({ signal: AbortSignal.timeout(20) })] });
    const [timedOut] = await deadline.run([call('t')]);
    expect(failure(timedOut).error).toEqual({ code: 'TIMEOUT', message: 't: timed out (a deadline the host set for this call passed)' });
    const scope = new AbortController();
    const started = deferred();
    const finish = deferred<string>();
    const watched = tool('t', { execute: () => (started.resolve(), finish.promise) });
    const late = vi.fn();
    const scoped = engine([watched], { executeWrappers: [(_exec, next) => next({ signal: scope.signal })], observers: { onLateSettlement: late } }).run([call('t')]);
    await started.promise;
    scope.abort();
    const [aborted] = await scoped;
    expect(failure(aborted).error.code).toBe('ABORTED');
    // Answered before the body settled: its settling is reported.
    finish.resolve('later');
    await vi.waitFor(() => expect(late).toHaveBeenCalledWith(expect.objectContaining({ toolName: 't', outcome: 'fulfilled' })));
  });

  it('calls waiting on one signal a wrapper shares add one listener to it, not one each (Node warns past 10)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const shared = new AbortController();
      const safe = tool('s', { isConcurrencySafe: () => true, execute: () => new Promise((resolve) => setImmediate(() => resolve(1))) });
      const results = await engine([safe], { maxParallel: 20, executeWrappers: [(_exec, next) => next({ signal: shared.signal })] }).run(Array.from({ length: 12 }, (_, index) => call('s', {}, `c${index}`)));
      expect(results.every((result) => !result.isError)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a wrapper that waits past the cancellation never runs the body of a call answered as not run', async () => {
    const controller = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting!: () => void;
    const inWrapper = new Promise<void>((resolve) => (waiting = resolve));
    const body = vi.fn(() => null);
    // What the wrapper's late next() came to: the signal that it ran, whatever it did.
    let nextSettled!: (outcome: unknown) => void;
    const lateNext = new Promise((resolve) => (nextSettled = resolve));
    const e = engine([tool('t', { execute: body })], {
      executeWrappers: [async (_exec, next) => {
        waiting();
        await gate;
        return next().then((value) => (nextSettled(value), value), (error: unknown) => (nextSettled(error), Promise.reject(error)));
      }],
    });
    const turn = e.run([call('t')], { signal: controller.signal });
    await inWrapper;
    controller.abort();
    const [result] = await turn;
    expect(failure(result).error.code).toBe('ABORTED_BEFORE_DISPATCH');
    release();
    await lateNext;
    expect(body).not.toHaveBeenCalled();
  });

  it('a body that never settles ends as TIMEOUT at its deadline, and its late end goes to observers only', async () => {
    vi.useFakeTimers();
    const release = deferred<null>();
    const onLateSettlement = vi.fn();
    const slow = tool('t', { timeoutMs: 500, execute: () => release.promise });
    const pending = engine([slow], { observers: { onLateSettlement } }).run([call('t')]);
    await vi.advanceTimersByTimeAsync(499);
    let settled = false;
    void pending.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const [result] = await pending;
    expect(failure(result).error).toEqual({ code: 'TIMEOUT', message: "t: timed out (the host's deadline for this tool passed)" });
    release.resolve(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(onLateSettlement).toHaveBeenCalledWith(expect.objectContaining({ toolName: 't', outcome: 'fulfilled' }));
  });

  it('a body that holds the event loop past its deadline and then returns is TIMEOUT too: the deadline passed before its answer', async () => {
    const blocking = tool('t', {
      timeoutMs: 20,
      execute: () => {
        // Synchronous: no timer can fire until it returns.
        const until = performance.now() + 60;
        while (performance.now() < until);
        return { ok: true };
      },
    });
    const [result] = await engine([blocking]).run([call('t')]);
    expect(failure(result).error).toEqual({ code: 'TIMEOUT', message: "t: timed out (the host's deadline for this tool passed)" });
  });

  it.each([
    ["open '/Users/Jane Doe/Library/Application Support/acme/credentials.json'", 'Jane|Doe|Library|Application|Support|acme|credentials'],
    ['read /home/jürgen/projekte/kunde-geheim/config.yaml failed', 'jürgen|projekte|kunde|geheim|config'],
    ['C:\\Users\\Jane Doe\\AppData\\Roaming\\acme\\token.txt not found', 'Jane|Doe|AppData|Roaming|acme|token'],
    ['~/secrets/vault.key is unreadable', '~|secrets|vault'],
    ["open '/home/jane/My Projects (old)/acme/secrets.json'", 'Projects|old|acme|secrets'],
    ["open '/Users/Jane O'Brien/Library/x.json'", 'Brien|Library'],
    ['/srv/builds/job#1234/workspace/.env missing', '1234|workspace|env'],
    ['cannot read /opt/app,v2/data/key.pem', 'v2|data|key'],
    ['see /home/jane/[draft]/plan.txt', 'draft|plan'],
    ['in /home/jane/two  spaces/x.txt', 'spaces|x.txt'],
    ['read ./config/prod/secrets.json', 'config|prod|secrets'],
    ['read \\\\server\\share\\dir\\file.txt', 'server|share|file'],
    ["ENOENT: no such file or directory, open '/flag.txt'", 'flag'],
    ['open /root', 'root'],
    ['FILE:///etc/passwd', 'etc|passwd'],
  ])('no part of a host path with spaces, letters beyond ASCII or a ~ survives: %s', async (thrown, leaks) => {
    const t = tool('t', { execute: () => { throw new Error(thrown); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toContain('<path>');
    expect(failure(result).error.message).not.toMatch(new RegExp(leaks));
  });

  // A URL keeps its host; its user and password (the host's secret, raw @, /, ? or # and all)
  // and a hostless URL's path (a local one) do not reach the model, nor a path after a comma.
  it.each([
    ['GET https://api.example.com/v1/items?page=2 failed; see http://localhost:8080/status', 't: GET https://api.example.com/v1/items?page=2 failed; see http://localhost:8080/status'],
    ['connect redis://:hunter2@10.0.0.5:6379/0 failed; see https://api.example.com/y', 't: connect redis://<credentials>@10.0.0.5:6379/0 failed; see https://api.example.com/y'],
    ['postgres://admin:s3cr@t!@db.internal:5432/app down', 't: postgres://<credentials>@db.internal:5432/app down'],
    ['postgres://admin:pa/ss#word@db.internal:5432/app down', 't: postgres://<credentials>@db.internal:5432/app down'],
    ['amqp://svc:top?secret@mq.internal down', 't: amqp://<credentials>@mq.internal down'],
    ['proxy http://proxy.internal:3128,/home/alice/.ssh/id_rsa unreadable', 't: proxy http://proxy.internal:3128,<path> unreadable'],
    ['see https://medium.com/@user', 't: see https://medium.com/@user'],
    ['connect ENOENT unix:///var/run/docker.sock and could not open sqlite:////srv/app/private/users.db', 't: connect ENOENT unix://<path> and could not open sqlite://<path>'],
  ])('a URL in a message: %s', async (thrown, shown) => {
    const t = tool('t', { execute: () => { throw new Error(thrown); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toBe(shown);
  });

  it('a slash between words or numbers is no path, and an async frame is a frame', async () => {
    const t = tool('t', { execute: () => { throw new Error('and/or HTTP/1.1 at 3/4 of 10 km/h\n    at async Promise.all (index 0)'); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toBe('t: and/or HTTP/1.1 at 3/4 of 10 km/h');
  });

  it('a message of a million newlines (a model\'s argument echoed in an error) is cleaned as soon as any other', async () => {
    // Stripping frames with a pattern whose leading whitespace ran across lines took quadratic
    // time: minutes of the host's thread for this one, long past the test's timeout.
    const t = tool('t', { execute: () => { throw new Error(`bad name: ${'\n'.repeat(1_000_000)}x\n    at f (/srv/app/x.js:1:2)`); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toBe('t: bad name:… (truncated)');
  });

  it('a message of many frames loses them all, and keeps what follows them', async () => {
    const frames = '\n    at f (/srv/app/x.js:1:2)'.repeat(600);
    const t = tool('t', { execute: () => { throw new Error(`head${frames}\nIMPORTANT TAIL /home/alice/secret.txt`); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toBe('t: head\nIMPORTANT TAIL <path>');
  });

  it('a line of the message that starts with "at" but is no stack frame is kept', async () => {
    const t = tool('t', { execute: () => { throw new Error('disk full\nat /var/lib/x no space is left'); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.message).toBe('t: disk full\nat <path> no space is left');
  });

  it('a thrown error is TOOL_ERROR without host paths or stack frames', async () => {
    const t = tool('t', { execute: () => { throw new Error(`ENOENT: open '/home/app/secrets/key.pem'\n    at Object.openSync (node:fs:573:3)`); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error.code).toBe('TOOL_ERROR');
    expect(failure(result).error.message).not.toContain('/home/app');
    expect(failure(result).error.message).not.toContain('node:fs');
    expect(failure(result).error.message).toContain('ENOENT');
  });

  it('a ToolCallError with a code outside the catalogue (untyped JavaScript) is TOOL_ERROR', async () => {
    const odd = tool('odd', { execute: () => { throw new ToolCallError('NOPE' as never, 'odd: custom failure'); } });
    const [result] = await engine([odd]).run([call('odd')]);
    expect(failure(result).error).toMatchObject({ code: 'TOOL_ERROR', message: 'odd: custom failure' });
  });

  it('a ToolCallError chooses its code', async () => {
    const t = tool('t', { execute: () => { throw new ToolCallError('CPU_LIMIT', 't: used more than 10 ms of CPU'); } });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error).toEqual({ code: 'CPU_LIMIT', message: 't: used more than 10 ms of CPU' });
  });

  it('a ToolCallError keeps its words but not host paths, stack frames or unbounded length', async () => {
    const leaky = tool('leaky', { execute: () => { throw new ToolCallError('TOOL_ERROR', "ENOENT open '/home/alice/.ssh/id_rsa'\n    at readKey (/srv/app/keys.js:10:5)"); } });
    const long = tool('long', { execute: () => { throw new ToolCallError('TOOL_ERROR', 'x'.repeat(5_000_000)); } });
    const [first, second] = await engine([leaky, long]).run([call('leaky'), call('long', {}, 'c2')]);
    expect(failure(first).error).toEqual({ code: 'TOOL_ERROR', message: "ENOENT open '<path>'" });
    expect(failure(second).error.message.length).toBeLessThan(2100);
    expect(JSON.stringify(second!.content).length).toBeLessThan(2200);
  });

  it('a thrown Proxy whose traps throw is an unreadable throw, not a pipeline failure quoting the trap', async () => {
    const onError = vi.fn();
    const t = tool('t', { execute: () => { throw new Proxy({}, { get() { throw new Error('db password rejected for admin'); } }); } });
    const [result] = await engine([t], { observers: { onError } }).run([call('t')]);
    expect(failure(result).error).toEqual({ code: 'TOOL_ERROR', message: 't: a non-Error value was thrown' });
    expect(onError).not.toHaveBeenCalled();
  });
});

describe('post-process and result', () => {
  it('metadata is copied as frozen JSON when set: the tool\'s later changes never reach the frozen result, and what JSON cannot carry fails the call', async () => {
    const live = { n: 1, nested: { list: [1] } };
    const keeps = tool('keeps', { execute: (_args, exec) => (exec.setMetadata({ live }), exec.setMetadata({ more: true }), 'ok') });
    const [result] = await engine([keeps]).run([call('keeps')]);
    live.n = 2;
    live.nested.list.push(2);
    expect(result!.metadata).toEqual({ live: { n: 1, nested: { list: [1] } }, more: true });
    expect(Object.isFrozen(result!.metadata!.live)).toBe(true);
    const bad = tool('bad', { execute: (_args, exec) => (exec.setMetadata({ big: 10n } as never), 'ok') });
    const [refused] = await engine([bad]).run([call('bad')]);
    expect(failure(refused).error).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining("setMetadata's argument is not lossless JSON at big") });
  });

  it('a value that fails the output schema is INVALID_TOOL_OUTPUT', async () => {
    const t = tool('t', { output: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, execute: () => ({ n: 'x' }) });
    const [result] = await engine([t]).run([call('t')]);
    expect(failure(result).error).toMatchObject({ code: 'INVALID_TOOL_OUTPUT', message: expect.stringContaining('/n: must be number') });
  });

  it('a value that is not JSON is INVALID_TOOL_OUTPUT', async () => {
    const [result] = await engine([tool('t', { execute: () => ({ when: new Date() }) as never })]).run([call('t')]);
    expect(failure(result).error.code).toBe('INVALID_TOOL_OUTPUT');
  });

  it('a value over the size limit is OUTPUT_TOO_LARGE', async () => {
    const [result] = await engine([tool('t', { execute: () => 'x'.repeat(200) })], { limits: { maxOutputBytes: 100 } }).run([call('t')]);
    expect(failure(result).error.code).toBe('OUTPUT_TOO_LARGE');
  });

  it('projectContent shapes what the model reads; the default is JSON text', async () => {
    const custom = tool('a', { execute: () => ({ n: 1 }), projectContent: (_args, value) => `n is ${(value as { n: number }).n}` });
    const [a, b] = await engine([custom, tool('b')]).run([call('a'), call('b')]);
    expect(a!.content).toBe('n is 1');
    expect(b!.content).toBe('{"ok":true}');
  });

  it('results are frozen and carry durationMs', async () => {
    const [result] = await engine([tool('t')]).run([call('t')]);
    expect(Object.isFrozen(result)).toBe(true);
    expect(result!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('finalizeContent runs exactly once for every outcome, and its failure becomes the error', async () => {
    const seen: string[] = [];
    const finalizeContent = (_exec: unknown, draft: { isError: boolean; content: string; error?: { code: string } }) => {
      seen.push(draft.isError ? draft.error!.code : 'ok');
      return `[final] ${draft.content}`;
    };
    const ok = tool('ok', { finalizeContent: finalizeContent as never });
    const bad = tool('bad', { finalizeContent: finalizeContent as never, execute: () => { throw new Error('x'); } });
    const denied = tool('denied', { finalizeContent: finalizeContent as never });
    const results = await engine([ok, bad, denied], { policy: { default: 'allow', rules: [{ tool: 'denied', decision: 'deny' }] } }).run([
      call('ok'), call('bad'), call('denied'), call('ok', '{bad'),
    ]);
    expect(seen).toEqual(['ok', 'TOOL_ERROR', 'PERMISSION_DENIED', 'INVALID_ARGS']);
    expect(results.every((r) => r.content.startsWith('[final] '))).toBe(true);

    const throwing = tool('t', { finalizeContent: () => { throw new Error('bad transform'); } });
    const [result] = await engine([throwing]).run([call('t')]);
    expect(failure(result).error).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('finalizeContent failed: bad transform') });
  });

  it('a finalizeContent that fails on a failure keeps that failure: a call that never ran is not "the tool threw"', async () => {
    const body = vi.fn();
    const transform = { finalizeContent: () => { throw new Error('bad transform'); }, execute: body };
    const controller = new AbortController();
    controller.abort();
    const [denied] = await engine([tool('wipe', transform)], { policy: { default: 'deny' } }).run([call('wipe')]);
    const [cancelled] = await engine([tool('wipe', transform)]).run([call('wipe')], { signal: controller.signal });
    const [invalid] = await engine([tool('wipe', transform)]).run([call('wipe', '[1]')]);
    expect(failure(denied!).error.code).toBe('PERMISSION_DENIED');
    expect(denied!.content).toBe('Error [PERMISSION_DENIED]: wipe: denied (the policy default for "wipe" is deny)');
    expect(failure(cancelled!).error).toEqual({ code: 'ABORTED_BEFORE_DISPATCH', message: 'wipe: cancelled before it started' });
    expect(failure(invalid!).error.code).toBe('INVALID_ARGS');
    expect(body).not.toHaveBeenCalled();
  });

  it('finalizeContent\'s content is held to the tool\'s output limit, as projectContent\'s is: a success becomes OUTPUT_TOO_LARGE, a failure keeps its code', async () => {
    const padded = { maxOutputBytes: 1000, finalizeContent: ((_exec: unknown, draft: { content: string }) => `${draft.content}${'x'.repeat(1001)}`) as never };
    const [grown, failed] = await engine([tool('grows', padded), tool('fails', { ...padded, execute: () => { throw new Error('broke'); } })]).run([call('grows'), call('fails')]);
    expect(failure(grown!).error).toEqual({ code: 'OUTPUT_TOO_LARGE', message: "grows: finalizeContent's content is larger than 1000 bytes" });
    expect(grown!.content).toBe('Error [OUTPUT_TOO_LARGE]: grows: the content is larger than this tool may return');
    expect(failure(failed!).error.code).toBe('TOOL_ERROR');
    expect(failed!.content).toMatch(/^Error \[TOOL_ERROR\]: fails: broke$/);
  });

  it('finalizeContent cannot rewrite the outcome: the error it is shown is frozen', async () => {
    const forger = tool('denied', {
      finalizeContent: ((_exec: unknown, draft: { error?: { code: string; message: string } }) => {
        try {
          Object.assign(draft.error!, { code: 'OK_NOT_REALLY', message: 'all good' });
        } catch {
          // frozen: the attempt fails
        }
        return 'all good';
      }) as never,
    });
    const [result] = await engine([forger], { policy: { default: 'deny' } }).run([call('denied')]);
    expect(failure(result).error.code).toBe('PERMISSION_DENIED');
    expect(failure(result).error.message).not.toBe('all good');
  });

  it('a pre-aborted call runs no stage but still gets one result and one finalizeContent', async () => {
    const body = vi.fn(() => null);
    const finalize = vi.fn(() => 'final');
    const approver = vi.fn(() => true);
    const guard = vi.fn(() => undefined);
    const stages: string[] = [];
    const onResult = vi.fn();
    const controller = new AbortController();
    controller.abort();
    const results = await engine([tool('t', { execute: body, finalizeContent: finalize })], {
      policy: { default: 'ask' }, approver, guards: [guard], observers: { onResult, onStage: (e) => stages.push(e.stage) },
    }).run([call('t')], { signal: controller.signal });
    expect(results).toHaveLength(1);
    expect(failure(results[0]).error.code).toBe('ABORTED_BEFORE_DISPATCH');
    expect(body).not.toHaveBeenCalled();
    expect(approver).not.toHaveBeenCalled();
    expect(guard).not.toHaveBeenCalled();
    expect(finalize).toHaveBeenCalledTimes(1);
    expect(onResult).toHaveBeenCalledTimes(1);
    expect(stages).toEqual(['parse', 'result']);
  });

  it('stages run in the declared order, and observer failures are contained', async () => {
    const stages: string[] = [];
    const results = await engine([tool('t')], {
      observers: { onStage: (e) => { stages.push(e.stage); throw new Error('observer bug'); }, onResult: () => { throw new Error('observer bug'); } },
    }).run([call('t')]);
    expect(results[0]!.isError).toBe(false);
    expect(stages).toEqual([...PIPELINE_STAGES]);
  });

  it('a zod output\'s refinements hold too: a value its JSON Schema passes but a refinement refuses is INVALID_TOOL_OUTPUT', async () => {
    const output = z.object({ cents: z.number().refine((n) => n >= 0, 'must not be negative'), currency: z.string().refine((c) => c === 'EUR', 'must be EUR') });
    const balance = (value: unknown) => defineTool({ name: 'balance', description: 'd', parameters: z.object({}), output, execute: () => value as never });
    const [bad] = await engine([balance({ cents: -500, currency: 'BTC' })]).run([call('balance')]);
    expect(failure(bad).error).toEqual({ code: 'INVALID_TOOL_OUTPUT', message: 'balance: the result does not match the declared output schema: /cents: must not be negative; /currency: must be EUR' });
    expect(bad!.content).toBe("Error [INVALID_TOOL_OUTPUT]: balance: the tool's result does not match what it declares");
    const [good] = await engine([balance({ cents: 500, currency: 'EUR' })]).run([call('balance')]);
    expect(good!.isError).toBe(false);
  });

  it('zod-authored tools parse (and default) before execute', async () => {
    const add = defineTool({ name: 'add', description: 'Add.', parameters: z.object({ a: z.number(), b: z.number().default(10) }), execute: ({ a, b }) => a + b });
    const [result] = await engine([add]).run([call('add', { a: 1 })]);
    expect(result).toMatchObject({ isError: false, value: 11 });
  });
});
