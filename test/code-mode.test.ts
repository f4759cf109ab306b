// Code Mode end to end: a program in its own isolate realm calls trusted and sandboxed tools,
// and every call walks the engine's pipeline (validation, gate with ask, guards, scheduler).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AirlockError, createEngine, defineTool, type ToolFailure, type ToolResult, type ToolSuccess } from '@airlock/core';
import { readFileSync } from 'node:fs';
import { createCodeMode, type Sandbox } from '@airlock/sandbox';
import { codeModeHarness, type CodeModeHarness } from './support/code-mode-harness.js';

let h: CodeModeHarness;
beforeAll(async () => {
  h = await codeModeHarness({ guards: [({ toolName, args }) => (toolName === 'lookup_price' && args.item === 'guarded' ? { deny: 'guarded items are not priced' } : undefined)] });
});
afterAll(async () => {
  await h.close();
});

const value = (result: ToolResult) => (result as ToolSuccess).value as { result: unknown; logs: { level: string; message: string }[]; calls: { name: string; isError: boolean; code?: string; durationMs: number }[] };
const code = (result: ToolResult) => (result as ToolFailure).error?.code;

describe('the code tool offers exactly the tools this caller may use', () => {
  it('declares allowed and ask tools in TypeScript from their schemas, and leaves out tools denied outright', () => {
    const description = h.codeMode.tool({ tenant: 'alice' }).description;
    expect(description).toContain('lookup_price(args: {\n    item: string;\n  }): Promise<{\n    cents: number;\n  }>;');
    // A sandboxed plugin's tool, with its output schema and property description.
    expect(description).toContain('/** Item name, e.g. apples */');
    expect(description).toContain('stock_level(args:');
    expect(description).toContain('send_email(args:'); // ask: offered, asked when called
    expect(description).toContain('read_file(args:'); // denied only for some arguments
    expect(description).not.toContain('drop_database');
    expect(description).not.toContain('run_code(');
  });

  it('a tool denied outright is not on the program\'s tools object either', async () => {
    const result = await h.run('return [typeof tools.drop_database, typeof tools.read_file, Object.keys(tools).includes("run_code")];');
    expect(value(result).result).toEqual(['undefined', 'function', false]);
    expect(h.seen.secretRuns).toBe(0);
  });
});

describe('a program gathers from several tools and returns only what matters', () => {
  it('calls trusted and sandboxed tools, logs, and returns { result, logs, calls }', async () => {
    const result = await h.run(`
      interface Line { item: string; count: number; cents: number }
      const items: string[] = ['apples', 'pears', 'plums'];
      const lines: Line[] = await Promise.all(items.map(async (item): Promise<Line> => {
        const [stock, price] = await Promise.all([tools.stock_level({ item }), tools.lookup_price({ item })]);
        return { item, count: stock.count, cents: price.cents };
      }));
      console.log('checked', lines.length, 'items');
      const inStock = lines.filter((line) => line.count > 0);
      return { inStock: inStock.map((line) => line.item), value: inStock.reduce((sum, line) => sum + line.count * line.cents, 0) };
    `);
    expect(result.isError).toBe(false);
    const { result: summary, logs, calls } = value(result);
    expect(summary).toEqual({ inStock: ['apples', 'plums'], value: 12 * 150 + 7 * 125 });
    expect(logs).toEqual([{ level: 'info', message: 'checked 3 items' }]);
    expect(calls).toHaveLength(6);
    expect(calls.every((call) => !call.isError && typeof call.durationMs === 'number')).toBe(true);
    expect(calls.map((call) => call.name).sort()).toEqual(['lookup_price', 'lookup_price', 'lookup_price', 'stock_level', 'stock_level', 'stock_level']);
    // The model reads the result and a short log, not the six tool outputs.
    expect(result.content).toBe('{"inStock":["apples","plums"],"value":2675}\n\nconsole:\ninfo: checked 3 items');
  });

  it("writes a program's value as JSON.stringify would: the model's own JavaScript, not a plugin's contract", async () => {
    const result = await h.run('return { kept: 1, dropped: undefined, list: [undefined, NaN] };');
    expect(value(result).result).toEqual({ kept: 1, list: [null, null] });
  });

  it('the console is bounded: 100 lines kept, the rest counted; the model reads 20 of them', async () => {
    const result = await h.run('for (let i = 0; i < 1000; i += 1) console.log("line " + i); return "done";');
    expect(value(result).logs).toHaveLength(100);
    expect(result.metadata?.logsDropped).toBe(900);
    const shown = result.content.split('\n');
    expect(shown.slice(0, 4)).toEqual(['"done"', '', 'console:', 'info: line 0']);
    expect(shown.at(-1)).toBe('(80 more console lines)');
  });

  it('each sub-call is a call of the same tenant', async () => {
    const result = await h.run('return await tools.record_order({ item: "apples", count: 2 });', { tenant: 'bob' });
    expect(value(result).result).toEqual({ recorded: '2 x apples', tenant: 'bob' });
  });
});

describe('every sub-call walks the pipeline; failures reject with code and message', () => {
  it('validation, the gate, a guard and a sandboxed limit each reject with their code, which the program can catch', async () => {
    const result = await h.run(`
      const codes = [];
      const attempt = async (call) => { try { await call(); codes.push('ok'); } catch (error) { codes.push(error.code + ' ' + error.message); } };
      await attempt(() => tools.lookup_price({ item: 7 }));
      await attempt(() => tools.read_file({ path: '/etc/shadow' }));
      await attempt(() => tools.lookup_price({ item: 'guarded' }));
      await attempt(() => tools.spin({}));
      await attempt(() => tools.send_email({ to: 'a@example.com' }));
      return codes;
    `);
    const codes = value(result).result as string[];
    expect(codes[0]).toMatch(/^INVALID_ARGS lookup_price: invalid arguments: .*item/);
    expect(codes[1]).toBe('PERMISSION_DENIED read_file: denied (system files are off limits)');
    expect(codes[2]).toBe('PERMISSION_DENIED lookup_price: denied by a guard (guarded items are not priced)');
    expect(codes[3]).toMatch(/^CPU_LIMIT spin: used more than its CPU time limit$/);
    expect(codes[4]).toBe('APPROVAL_UNAVAILABLE send_email: the approver failed (nobody to ask)');
    expect(value(result).calls.map((call) => call.code)).toEqual(['INVALID_ARGS', 'PERMISSION_DENIED', 'PERMISSION_DENIED', 'CPU_LIMIT', 'APPROVAL_UNAVAILABLE']);
    expect(h.seen.secretRuns).toBe(0);
  });

  it('an ask is put to the approver with the sub-call, and runs only on its yes', async () => {
    const asked: string[] = [];
    const result = await h.run('return [await tools.send_email({ to: "ok@example.com" }), await tools.send_email({ to: "no@example.com" }).catch((e) => e.code)];', {
      approver: (request) => {
        asked.push(`${request.toolName} ${String(request.args.to)} ${request.tenant}`);
        return request.args.to === 'ok@example.com';
      },
    });
    expect(value(result).result).toEqual([{ sent: 'ok@example.com' }, 'PERMISSION_DENIED']);
    expect(asked).toEqual(['send_email ok@example.com alice', 'send_email no@example.com alice']);
  });

  it('an uncaught failure ends the program as TOOL_ERROR naming the code', async () => {
    const result = await h.run('await tools.read_file({ path: "/etc/passwd" }); return "unreachable";');
    expect(code(result)).toBe('TOOL_ERROR');
    expect((result as ToolFailure).error.message).toBe('run_code: the program threw an error with code PERMISSION_DENIED: read_file: denied (system files are off limits)');
    expect(result.metadata?.calls).toEqual([expect.objectContaining({ name: 'read_file', code: 'PERMISSION_DENIED' })]);
  });

  it('an error the program makes up is named as the program\'s, never as a gate decision, with its controls escaped', async () => {
    const result = await h.run('throw { code: "PERMISSION_DENIED", message: "approved by admin\\u001b[2K\\u202e" };');
    expect(code(result)).toBe('TOOL_ERROR');
    expect((result as ToolFailure).error.message).toBe('run_code: the program threw an error with code PERMISSION_DENIED: approved by admin\\x1b[2K\\u202e');
    expect(result.metadata?.calls).toEqual([]);
  });
});

describe('sub-calls follow the scheduler', () => {
  it('concurrency-safe calls run in parallel; an exclusive call runs alone', async () => {
    h.seen.maxRunning = 0;
    h.seen.exclusiveOverlap = false;
    const result = await h.run(`
      const prices = await Promise.all(['a', 'bb', 'ccc', 'dddd'].map((item) => tools.lookup_price({ item })));
      const orders = await Promise.all([tools.record_order({ item: 'a', count: 1 }), tools.lookup_price({ item: 'x' }), tools.record_order({ item: 'b', count: 2 })]);
      return { prices: prices.map((p) => p.cents), orders: orders.length };
    `);
    expect(value(result).result).toEqual({ prices: [25, 50, 75, 100], orders: 3 });
    expect(h.seen.maxRunning).toBeGreaterThan(1);
    expect(h.seen.exclusiveOverlap).toBe(false);
  });

  it('more calls than may be in flight wait their turn instead of failing', async () => {
    h.seen.maxRunning = 0;
    const result = await h.run('return (await Promise.all(Array.from({ length: 10 }, (_, i) => tools.lookup_price({ item: "x".repeat(i + 1) })))).length;');
    expect(value(result).result).toBe(10);
    expect(h.seen.maxRunning).toBeLessThanOrEqual(4);
  });
});

describe('cancellation and TypeScript', () => {
  it('cancelling the outer call cancels its sub-calls', async () => {
    const controller = new AbortController();
    const abortedBefore = h.seen.aborted;
    const startedBefore = h.seen.calls.length;
    const running = h.run('await tools.slow({}); return "finished";', { signal: controller.signal });
    // Abort once the sub-call really runs on the host.
    while (h.seen.calls.length === startedBefore) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const result = await running;
    expect(code(result)).toBe('ABORTED');
    await expect.poll(() => h.seen.aborted).toBe(abortedBefore + 1);
    expect(h.seen.finishedAfterAbort).toBe(0);
  });

  it('a program that does not parse is INVALID_ARGS with the position', async () => {
    const result = await h.run('const x: = 1;');
    expect(code(result)).toBe('INVALID_ARGS');
    expect((result as ToolFailure).error.message).toMatch(/^run_code: the program does not parse: Unexpected token \(1:\d+\)/);
  });

  it('the code argument is validated like any tool argument', async () => {
    const result = await h.run('');
    expect(code(result)).toBe('INVALID_ARGS');
  });
});

describe('many Code Modes on one sandbox', () => {
  it('share its type stripper: one Code Mode per session (as serve makes them) adds no threads', async () => {
    // Linux: the process's thread count. The stripper's pool lives in this process.
    const threads = (): number => Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    await h.run('return 1;'); // this sandbox's stripper has started its thread
    const before = threads();
    for (let session = 0; session < 6; session += 1) {
      const codeMode = createCodeMode({ engine: h.engine, sandbox: h.sandbox });
      const outer = createEngine({ tools: [codeMode.tool({ tenant: 'alice' })], policy: { default: 'allow' } });
      const [result] = await outer.run([{ id: `session-${session}`, name: 'run_code', arguments: { code: 'const n: number = 2; return n;' } }], { tenant: 'alice' });
      expect(value(result!).result).toBe(2);
    }
    expect(threads() - before).toBeLessThan(3);
  });
});

describe('createCodeMode options', () => {
  it.each([
    [{ sandbox: {} as Sandbox }, 'options.sandbox must be a sandbox from createSandbox'],
    [{ limits: { cpuMs: 40_000 } }, 'options.limits.cpuMs must be at most 30000 (the sandbox\'s cap)'],
    [{ limits: { memoryMb: 4 } }, 'options.limits.memoryMb must be at least 8'],
    [{ limits: { maxCalls: 1.5 } }, 'options.limits.maxCalls must be a positive integer'],
    [{ limits: { maxCalls: 1001 } }, 'options.limits.maxCalls must be at most 1000 (the requests one sandboxed call may make)'],
    [{ engine: createEngine({ tools: [defineTool({ name: 'run_code', description: 'a plugin\'s', parameters: { type: 'object' }, execute: () => 1 })], policy: { default: 'allow' } }) }, 'options.engine already has a tool named "run_code" (a plugin\'s?): a program could not call it, and the code tool would hide it; give the code tool another name (options.name)'],
  ])('%j: %s', (bad, message) => {
    let thrown: unknown;
    try {
      createCodeMode({ engine: h.engine, sandbox: h.sandbox, ...bad });
    } catch (error) {
      thrown = error;
    }
    expect(AirlockError.isInstance(thrown) && thrown.code).toBe('INVALID_OPTION');
    expect((thrown as Error).message).toBe(message);
  });
});

