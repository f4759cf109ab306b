// Code Mode's core half with a stand-in runner: declarations from schemas, what a caller is
// offered, the host's caps on sub-calls, scheduling, the value and its content.
import { describe, expect, it } from 'vitest';
import { AirlockError, ToolCallError, codeModeLimits, createCodeTool, createEngine, createPolicy, schemaToTypeScript, type CodeRunner, type Engine, type JsonValue, type SubCallAnswer, type ToolFailure, type ToolSuccess } from '../src/index.js';
import { deferred, engine, tool } from './helpers.js';

describe('schemaToTypeScript', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer' }, 'number'],
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ enum: ['a', 'b', 3, null] }, '"a" | "b" | 3 | null'],
    [{ const: 'fixed' }, '"fixed"'],
    [{ type: 'array', items: { type: 'number' } }, 'number[]'],
    [{ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, '(string | number)[]'],
    [{ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }, '[string, number]'],
    [{ oneOf: [{ type: 'boolean' }, { type: 'string' }] }, 'boolean | string'],
    [{ type: 'object', properties: {}, additionalProperties: false }, '{}'],
    [{ type: 'object', additionalProperties: { type: 'number' } }, '{\n  [key: string]: number;\n}'],
    [{}, 'unknown'],
    [{ not: { type: 'string' } }, 'unknown'],
  ])('%j is %s', (schema, expected) => {
    expect(schemaToTypeScript(schema as never)).toBe(expected);
  });

  it('objects: required and optional properties, quoted names, descriptions as comments', () => {
    expect(schemaToTypeScript({
      type: 'object',
      properties: { path: { type: 'string', description: 'Where.' }, 'dry-run': { type: 'boolean' } },
      required: ['path'],
    })).toBe('{\n  /** Where. */\n  path: string;\n  "dry-run"?: boolean;\n}');
  });

  it('local $ref is followed; a cycle stops at unknown', () => {
    const type = schemaToTypeScript({ $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' });
    expect(type).toContain('next?: {');
    expect(type).toContain('unknown');
  });

  it('a description cannot close its comment or add lines of code', () => {
    const type = schemaToTypeScript({ type: 'object', properties: { a: { type: 'string', description: 'x */ declare const evil: 1; /*\u2028y' } } });
    expect(type).toBe('{\n  /** x *\\/ declare const evil: 1; /* y */\n  a?: string;\n}');
  });

  it('a definition that refers to itself many times renders in bounded work (the reviewer\'s schema: anyOf of 40 self-$refs)', () => {
    // Re-rendered at each reference this is 40^12 steps: the test would hang, not fail.
    const refs = Array.from({ length: 40 }, () => ({ $ref: '#/$defs/a' }));
    const schema = { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { anyOf: refs } } };
    expect(schemaToTypeScript(schema)).toBe('{\n  x?: unknown;\n}');
    const fine = { type: 'object', properties: { x: { anyOf: Array.from({ length: 40 }, () => ({ $ref: '#/$defs/b' })) } }, $defs: { b: { type: 'string' } } };
    expect(schemaToTypeScript(fine)).toBe('{\n  x?: string;\n}');
  });

  it('every render step and union member is charged: a short type from too many nodes is unknown', () => {
    expect(schemaToTypeScript({ anyOf: Array.from({ length: 5000 }, () => ({ type: 'string' })) })).toBe('unknown');
    expect(schemaToTypeScript({ enum: Array.from({ length: 5000 }, () => 'a') })).toBe('unknown');
    expect(schemaToTypeScript({ anyOf: Array.from({ length: 100 }, () => ({ type: 'string' })) })).toBe('string');
  });

  it('quoted names and literals keep no raw line separators or invisible characters', () => {
    const type = schemaToTypeScript({ type: 'object', properties: { 'a\u2028*/ b\u202e': { enum: ['\u2029x', 'q\u200b'] } } });
    expect(type).toBe('{\n  "a\\u2028*/ b\\u202e"?: "\\u2029x" | "q\\u200b";\n}');
    expect(type).not.toMatch(/[\u2028\u2029\u200b\u202e]/u);
  });

  it('a type past the size bound is unknown', () => {
    const properties = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`property_${i}`, { type: 'string' }]));
    expect(schemaToTypeScript({ type: 'object', properties })).toBe('unknown');
  });
});

describe('policy.deniesOutright', () => {
  const policy = createPolicy({
    default: 'deny',
    rules: [
      { tool: 'read', decision: 'allow' },
      { tool: 'read', when: { path: '/etc/**' }, decision: 'deny' },
      { tool: 'write', when: { path: '/tmp/**' }, decision: 'allow' },
      { tool: 'shell', decision: 'deny' },
      { tool: 'shell', decision: 'allow', tenants: ['root'] },
      { tool: 'mail', decision: 'ask' },
    ],
  });
  it.each([
    ['read', undefined, false],
    ['write', undefined, false], // denied by default, but a conditional allow lets some arguments pass
    ['shell', 'root', true], // the strictest unconditional rule wins
    ['mail', undefined, false],
    ['other', undefined, true],
  ])('%s for %s: %s', (name, tenant, expected) => {
    expect(policy.deniesOutright!(name, tenant)).toBe(expected);
  });
});

/** A runner that plays the program: `script` gets the request and returns the result. */
function runnerOf(script: Parameters<CodeRunner>[0] extends infer R ? (request: R) => Promise<JsonValue> : never, logs: { level: string; message: string }[] = []): CodeRunner {
  return async (request) => ({ result: await script(request), logs });
}

async function runProgram(inner: Engine, runner: CodeRunner, options: { limits?: Parameters<typeof codeModeLimits>[0]; signal?: AbortSignal; tenant?: string } = {}) {
  const outer = createEngine({ tools: [createCodeTool({ engine: inner, runner, ...(options.limits === undefined ? {} : { limits: options.limits }) })], policy: { default: 'allow' } });
  const [result] = await outer.run([{ id: 'p', name: 'run_code', arguments: { code: 'return 1' } }], { ...(options.signal === undefined ? {} : { signal: options.signal }), ...(options.tenant === undefined ? {} : { tenant: options.tenant }) });
  return result!;
}

describe('the code tool', () => {
  it('offers the engine\'s tools but those denied outright, and never itself', () => {
    const inner = engine([tool('a'), tool('b'), tool('run_code')], { policy: { default: 'allow', rules: [{ tool: 'b', decision: 'deny' }] } });
    const description = createCodeTool({ engine: inner, runner: runnerOf(async () => null) }).description;
    expect(description).toContain('  a(args: {');
    expect(description).not.toMatch(/\bb\(args/);
    expect(description).not.toContain('run_code(args');
  });

  it('a program cannot call the code tool (no program starts another)', async () => {
    const inner = engine([tool('run_code')]);
    const result = await runProgram(inner, runnerOf(async (request) => (await request.callTool('run_code', {})) as unknown as JsonValue));
    expect((result as ToolSuccess).value).toMatchObject({ result: { ok: false, code: 'UNKNOWN_TOOL' } });
  });

  it('a program calls only tools on its `tools`: any other name is refused by the host, never reaching the pipeline or `calls`', async () => {
    const denied = tool('secret_op', { execute: () => 'ran' });
    const inner = engine([tool('a'), denied], { policy: { default: 'allow', rules: [{ tool: 'secret_op', decision: 'deny' }] } });
    const result = await runProgram(inner, runnerOf(async (request) => {
      const answers: SubCallAnswer[] = [];
      for (const name of ['secret_op', 'run_code', `write_file\u202e${'x'.repeat(300)}`, 42, 'a']) answers.push(await request.callTool(name as string, {}));
      return answers as unknown as JsonValue;
    }));
    const { result: answers } = (result as ToolSuccess).value as { result: SubCallAnswer[] };
    expect(answers.slice(0, 4).map((answer) => (answer.ok ? 'ok' : answer.code))).toEqual(['UNKNOWN_TOOL', 'UNKNOWN_TOOL', 'UNKNOWN_TOOL', 'UNKNOWN_TOOL']);
    expect(answers[0]).toEqual({ ok: false, code: 'UNKNOWN_TOOL', message: '"secret_op" is not one of this program\'s tools' });
    expect((answers[2] as { message: string }).message).toBe(`"write_file\\u202e${'x'.repeat(117)}…" is not one of this program's tools`);
    expect(answers[4]).toMatchObject({ ok: true });
    expect(result.metadata).toMatchObject({ calls: [{ name: 'a', isError: false }] });
    expect((result.metadata as { calls: unknown[] }).calls).toHaveLength(1);
  });

  it('the host refuses calls past the total cap and past the in-flight cap, whatever the program does', async () => {
    const gate = deferred();
    const inner = engine([tool('slow', { isConcurrencySafe: () => true, execute: async () => (await gate.promise, 'done') })]);
    const result = await runProgram(inner, runnerOf(async (request) => {
      const first = Array.from({ length: 6 }, () => request.callTool('slow', {}));
      const answers = await Promise.all([first[4]!, first[5]!]);
      gate.resolve();
      const done = await Promise.all(first.slice(0, 4));
      const more = await Promise.all(Array.from({ length: 3 }, () => request.callTool('slow', {})));
      return [...answers, ...done, ...more].map((answer: SubCallAnswer) => (answer.ok ? 'ok' : answer.code));
    }), { limits: { maxCalls: 5, maxCallsInFlight: 4 } });
    expect((result as ToolSuccess).value).toMatchObject({ result: ['TOO_MANY_CALLS', 'TOO_MANY_CALLS', 'ok', 'ok', 'ok', 'ok', 'ok', 'TOO_MANY_CALLS', 'TOO_MANY_CALLS'] });
  });

  it('calls started together run as one turn: parallel ones together, an exclusive one alone', async () => {
    let running = 0;
    let peak = 0;
    let overlap = false;
    let parallelPeak = 0;
    const body = (exclusive: boolean) => async () => {
      if (exclusive ? running > 0 : false) overlap = true;
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      return null;
    };
    const inner = engine([tool('safe', { isConcurrencySafe: () => true, execute: body(false) }), tool('exclusive', { execute: body(true) })]);
    await runProgram(inner, runnerOf(async (request) => {
      await Promise.all([request.callTool('safe', {}), request.callTool('safe', {}), request.callTool('safe', {})]);
      parallelPeak = peak;
      await Promise.all([request.callTool('exclusive', {}), request.callTool('safe', {}), request.callTool('exclusive', {})]);
      return null;
    }));
    expect(parallelPeak).toBe(3);
    expect(overlap).toBe(false);
  });

  it('a sub-call the program left running is cancelled and answered before the program\'s result', async () => {
    let aborted = false;
    const inner = engine([tool('hang', { execute: (_args, exec) => new Promise((_resolve, reject) => exec.signal.addEventListener('abort', () => { aborted = true; reject(new Error('stopped')); })) })]);
    const started = deferred();
    const result = await runProgram(inner, runnerOf(async (request) => {
      void request.callTool('hang', {});
      setTimeout(() => started.resolve(), 20);
      await started.promise;
      return 'returned';
    }));
    expect(aborted).toBe(true);
    expect((result as ToolSuccess).value).toMatchObject({ result: 'returned', calls: [{ name: 'hang', isError: true, code: 'ABORTED' }] });
  });

  it('a trusted sub-call that ignores its signal and never settles holds the program no longer than its timeoutMs', async () => {
    // Waiting for it to settle would hang the program's call for good, cancelled or not.
    const inner = engine([tool('deaf', { execute: () => new Promise(() => {}) })]);
    const returned = await runProgram(inner, runnerOf(async (request) => {
      void request.callTool('deaf', {});
      await new Promise((resolve) => setImmediate(resolve));
      return 'returned';
    }), { limits: { timeoutMs: 150 } });
    expect((returned as ToolSuccess).value).toMatchObject({ result: 'returned', calls: [{ name: 'deaf', isError: true, code: 'TIMEOUT' }] });

    // A call queued behind it (turns run one after another) is answered and listed too.
    const queuedBehind = await runProgram(inner, runnerOf(async (request) => {
      void request.callTool('deaf', {});
      await new Promise((resolve) => setImmediate(resolve));
      void request.callTool('deaf', {});
      await new Promise((resolve) => setImmediate(resolve));
      return 'returned';
    }), { limits: { timeoutMs: 150 } });
    expect((queuedBehind as ToolSuccess).value).toMatchObject({ calls: [{ name: 'deaf', code: 'TIMEOUT' }, { name: 'deaf', code: 'ABORTED_BEFORE_DISPATCH' }] });

    const cancel = new AbortController();
    const stoppedRunner: CodeRunner = async (request) => {
      void request.callTool('deaf', {});
      await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(new ToolCallError('ABORTED', 'cancelled'))));
      return { result: null, logs: [] };
    };
    setTimeout(() => cancel.abort(), 20);
    const cancelled = await runProgram(inner, stoppedRunner, { limits: { timeoutMs: 150 }, signal: cancel.signal });
    expect((cancelled as ToolFailure).error.code).toBe('ABORTED');
    expect(cancelled.metadata).toMatchObject({ calls: [{ name: 'deaf', isError: true, code: 'TIMEOUT' }] });
  }, 10_000);

  it('a program gets what the model would read: a projected tool\'s content, not its raw value, and a failure\'s model-facing message', async () => {
    const inner = engine([
      tool('lookup', { execute: () => ({ name: 'Ann', ssn: '123-45-6789' }), projectContent: (_args, value) => `name: ${(value as { name: string }).name}` }),
      tool('finalized', { execute: () => ({ secret: 'k' }), finalizeContent: () => 'done' }),
      tool('plain', { execute: () => ({ n: 1 }) }),
      tool('report', { output: { type: 'object', required: ['audit_token'] }, execute: () => ({}) }),
    ]);
    const description = createCodeTool({ engine: inner, runner: runnerOf(async () => null) }).description;
    expect(description).toMatch(/lookup\(args: \{[^}]*\}\): Promise<string>/);
    expect(description).not.toContain('audit_token');
    const result = await runProgram(inner, runnerOf(async (request) => {
      const answers = [];
      for (const name of ['lookup', 'finalized', 'plain', 'report']) answers.push(await request.callTool(name, {}));
      return answers as unknown as JsonValue;
    }));
    const [lookup, finalized, plain, report] = ((result as ToolSuccess).value as { result: SubCallAnswer[] }).result;
    expect(lookup).toEqual({ ok: true, value: 'name: Ann' });
    expect(finalized).toEqual({ ok: true, value: 'done' });
    expect(plain).toEqual({ ok: true, value: { n: 1 } });
    expect(report).toEqual({ ok: false, code: 'INVALID_TOOL_OUTPUT', message: "report: the tool's result does not match what it declares" });
  });

  it('what the sub-calls\' tools logged reaches the operator in the metadata, naming tool and call, never the model', async () => {
    const noisy = tool('noisy', { execute: (_args, exec) => (exec.setMetadata({ logs: [{ level: 'warn', message: 'PLUGIN line' }], logsDropped: 2 }), 'done') });
    const result = await runProgram(engine([noisy]), runnerOf(async (request) => ((await request.callTool('noisy', {})) as { value: JsonValue }).value));
    expect(result.metadata?.logs).toEqual([{ level: 'warn', message: 'noisy (p/run_code.1): PLUGIN line' }]);
    expect(result.metadata?.logsDropped).toBe(2);
    expect(result.content).not.toContain('PLUGIN');
  });

  it('console lines full of control characters (six bytes each in JSON) never push a program past its output limit', async () => {
    const logs = Array.from({ length: 100 }, () => ({ level: 'info', message: '\u0001'.repeat(160) }));
    const result = await runProgram(engine([tool('a')]), runnerOf(async () => 'x'.repeat(60_000), logs));
    expect(result.isError).toBe(false);
    const kept = ((result as ToolSuccess).value as { logs: { message: string }[] }).logs;
    expect(kept.length).toBeLessThan(100);
    expect(kept.at(-1)!.message).toBe(`(${101 - kept.length} more console lines not kept: the log is limited to 32768 bytes of JSON)`);
  });

  it('sub-calls carry the program\'s tenant', async () => {
    const inner = engine([tool('who', { execute: (_args, exec) => exec.tenant ?? null })]);
    const result = await runProgram(inner, runnerOf(async (request) => ((await request.callTool('who', {})) as { value: JsonValue }).value), { tenant: 'acme' });
    expect((result as ToolSuccess).value).toMatchObject({ result: 'acme' });
  });

  it('a code tool made for a tenant runs no program for another tenant, or for none', async () => {
    const inner = engine([tool('who', { execute: (_args, exec) => exec.tenant ?? null })]);
    let ran = 0;
    const runner = runnerOf(async (request) => {
      ran += 1;
      return ((await request.callTool('who', {})) as { value: JsonValue }).value;
    });
    const outer = createEngine({ tools: [createCodeTool({ engine: inner, runner, tenant: 'acme' })], policy: { default: 'allow' } });
    const call = [{ id: 'p', name: 'run_code', arguments: { code: 'return 1' } }];
    expect((await outer.run(call, { tenant: 'acme' }))[0]).toMatchObject({ isError: false, value: { result: 'acme' } });
    expect((await outer.run(call, { tenant: 'evil' }))[0]).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR', message: 'run_code: made for tenant "acme", called for tenant "evil"; pass the same tenant to the engine\'s run' } });
    expect((await outer.run(call))[0]).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR', message: expect.stringContaining('called for no tenant') } });
    expect(ran).toBe(1);
  });

  it('what the program wrote reaches the content with controls, bidi and invisible characters escaped; the JSON stays the same JSON', async () => {
    const ok = await runProgram(engine([]), runnerOf(async () => ({ name: 'a\u202eb\u0085\u2028' }), [{ level: 'info', message: 'x\u001b]0;owned\u0007\u001b[2J' }]));
    expect(ok.content).toBe('{"name":"a\\u202eb\\u0085\\u2028"}\n\nconsole:\ninfo: x\\x1b]0;owned\\x07\\x1b[2J');
    expect(JSON.parse((ok.content as string).split('\n')[0] as string)).toEqual({ name: 'a\u202eb\u0085\u2028' });
    const failed = await runProgram(engine([]), async () => {
      const { ToolCallError } = await import('../src/index.js');
      throw new ToolCallError('TOOL_ERROR', 'the program threw an error with code X: \u001b[31mred\u202e');
    });
    expect((failed as ToolFailure).error.message).toBe('run_code: the program threw an error with code X: \\x1b[31mred\\u202e');
  });

  it('the content is the result and a short log; a failure keeps its code and names the tool', async () => {
    const ok = await runProgram(engine([]), runnerOf(async () => ({ total: 3 }), [{ level: 'info', message: 'counted' }]));
    expect(ok.content).toBe('{"total":3}\n\nconsole:\ninfo: counted');
    const big = await runProgram(engine([]), runnerOf(async () => 'x'.repeat(100), [{ level: 'info', message: 'y'.repeat(50) }]), { limits: { maxOutputBytes: 120 } });
    expect(big.content).toBe(`"${'x'.repeat(100)}"\n\n(1 console lines not shown: the result fills the output limit)`);
    const failed = await runProgram(engine([]), async () => {
      const { ToolCallError } = await import('../src/index.js');
      throw new ToolCallError('CPU_LIMIT', 'used more than 10 ms of CPU time');
    });
    expect((failed as ToolFailure).error).toEqual({ code: 'CPU_LIMIT', message: 'run_code: used more than 10 ms of CPU time' });
  });

  it.each([
    [{ cpuMs: 0 }, 'options.limits.cpuMs must be a positive integer'],
    [{ maxCallsInFlight: 17 }, 'options.limits.maxCallsInFlight must be at most 16'],
    [{ cpuMS: 5 }, 'options.limits.cpuMS is not a Code Mode limit'],
  ])('limits %j: %s', (limits, message) => {
    expect(() => createCodeTool({ engine: engine([]), runner: runnerOf(async () => null), limits: limits as never })).toThrow(message);
    try {
      codeModeLimits(limits as never);
    } catch (error) {
      expect(AirlockError.isInstance(error) && error.code).toBe('INVALID_OPTION');
    }
  });
});
