// Hostile programs are contained like hostile plugins. Each test asserts the exact code (or
// the exact refusal inside the program), what the host saw, and that another tenant's
// program right after is answered correctly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type ToolFailure, type ToolResult, type ToolSuccess } from '@airlock/core';
import { createCodeMode } from '@airlock/sandbox';
import { codeModeHarness, type CodeModeHarness } from './support/code-mode-harness.js';

let h: CodeModeHarness;
/** A second Code Mode on the same engine and sandbox with room for the memory and wall-clock attacks. */
let roomy: Engine;
beforeAll(async () => {
  h = await codeModeHarness();
  const codeMode = createCodeMode({ engine: h.engine, sandbox: h.sandbox, limits: { memoryMb: 16, cpuMs: 5000, timeoutMs: 1500 } });
  roomy = createEngine({ tools: [codeMode.tool({ tenant: 'mallory' })], policy: { default: 'allow' } });
});
afterAll(async () => {
  await h.close();
});

const value = (result: ToolResult) => (result as ToolSuccess).value as { result: unknown; calls: { name: string; isError: boolean; code?: string }[] };
const code = (result: ToolResult) => (result as ToolFailure).error?.code;

async function attack(program: string): Promise<ToolResult> {
  return h.run(program, { tenant: 'mallory' });
}

/** Another tenant's program, right after: answered, correctly, from a clean realm. */
async function expectNeighbourServed(): Promise<void> {
  const result = await h.run('const { count } = await tools.stock_level({ item: "apples" }); return [count, typeof Object.prototype.toJSON, JSON.stringify({ a: 1 })];', { tenant: 'carol' });
  expect(result.isError).toBe(false);
  expect(value(result).result).toEqual([12, 'undefined', '{"a":1}']);
}

describe('limits of the program itself', () => {
  it('an infinite loop ends as CPU_LIMIT', async () => {
    expect(code(await attack('for (;;) {}'))).toBe('CPU_LIMIT');
    await expectNeighbourServed();
  });

  it('a promise flood (microtasks that never yield) ends as CPU_LIMIT', async () => {
    expect(code(await attack('const spin = () => { Promise.resolve().then(spin); }; spin(); await new Promise(() => {});'))).toBe('CPU_LIMIT');
    await expectNeighbourServed();
  });

  it('work left running after the program returned is still watched: CPU_LIMIT', async () => {
    expect(code(await attack('(async () => { for (;;) await null; })(); return "returned";'))).toBe('CPU_LIMIT');
    await expectNeighbourServed();
  });

  it('a memory bomb ends as MEMORY_LIMIT', async () => {
    const [result] = await roomy.run([{ id: 'bomb', name: 'run_code', arguments: { code: 'const keep = []; for (let i = 0; ; i += 1) keep.push({ i, pad: "x".repeat(64) + i });' } }], { tenant: 'mallory' });
    expect(code(result!)).toBe('MEMORY_LIMIT');
    await expectNeighbourServed();
  });

  it('a program that never settles ends as TIMEOUT at its wall clock', async () => {
    const started = performance.now();
    const [result] = await roomy.run([{ id: 'wait', name: 'run_code', arguments: { code: 'await new Promise(() => {});' } }], { tenant: 'mallory' });
    expect(code(result!)).toBe('TIMEOUT');
    expect(performance.now() - started).toBeGreaterThanOrEqual(1500 - 5);
    await expectNeighbourServed();
  });

  it('a type-stripping bomb (the reviewer\'s 64 KB `a<b<b<...>(x)` chains) ends as CPU_LIMIT off the main thread; another tenant is answered meanwhile', async () => {
    // Quadratic in sucrase's parser: seconds of CPU. On the host's main thread it would hold
    // every tenant until it ended; stripped on a worker under the program's cpuMs, it does not.
    const statement = 'x = a' + '<b'.repeat(1000) + '>(x);\n';
    const bomb = 'let x;\n' + statement.repeat(Math.floor(64_000 / statement.length)) + 'return 1;';
    const order: string[] = [];
    const bombed = attack(bomb).then((result) => {
      order.push('bomb');
      return result;
    });
    const neighbour = await h.run('const { count } = await tools.stock_level({ item: "apples" }); return count;', { tenant: 'carol' });
    order.push('neighbour');
    expect(value(neighbour).result).toBe(12);
    const result = await bombed;
    expect(code(result)).toBe('CPU_LIMIT');
    expect((result as ToolFailure).error?.message).toMatch(/stripping the program's types took longer than \d+ ms/);
    expect(order).toEqual(['neighbour', 'bomb']);
    await expectNeighbourServed();
  });

  it('a program that does not parse is INVALID_ARGS with the parser\'s message', async () => {
    const result = await attack('const x: = 1;');
    expect(code(result)).toBe('INVALID_ARGS');
    expect((result as ToolFailure).error?.message).toMatch(/^run_code: the program does not parse: /);
  });

  it('a result over the output limit is OUTPUT_TOO_LARGE', async () => {
    expect(code(await attack('return "x".repeat(100 * 1024);'))).toBe('OUTPUT_TOO_LARGE');
    await expectNeighbourServed();
  });
});

describe('attempts to reach the host', () => {
  it('constructor escapes find only the program\'s own realm', async () => {
    const result = await attack(`
      const viaTool = tools.lookup_price.constructor('return typeof process + "," + typeof require + "," + typeof globalThis.__airlock_host + "," + typeof globalThis.__airlock_entry')();
      const viaThis = (function () { return this; }).constructor.constructor('return typeof process')();
      const viaAsync = (async () => {}).constructor;
      let imported;
      try { await viaAsync('return import("node:fs")')(); imported = 'imported'; } catch (error) { imported = 'refused'; }
      const globals = Object.getOwnPropertyNames(globalThis).filter((name) => /process|require|module|ivm|airlock|host|^Buffer$|setTimeout/i.test(name));
      // Frames of an error a failed call rejects with: built in this realm, with no host file in them.
      Error.prepareStackTrace = (_error, frames) => frames.map((frame) => String(frame.getFileName()));
      let frames;
      try { await tools.lookup_price({ item: 1 }); } catch (error) { frames = error.stack.filter((file) => /^([/]|file:|node:)/.test(file)); }
      return { viaTool, viaThis, imported, globals, frames };
    `);
    expect(value(result).result).toEqual({ viaTool: 'undefined,undefined,undefined,undefined', viaThis: 'undefined', imported: 'refused', globals: [], frames: [] });
    await expectNeighbourServed();
  });

  it('prototype tampering shapes only the program\'s own realm; the gate judges the JSON the tool receives', async () => {
    const result = await attack(`
      Promise.prototype.then = function () { throw new Error('tampered'); };
      Array.prototype.push = function () { throw new Error('tampered'); };
      Reflect.apply = () => { throw new Error('tampered'); };
      JSON.parse = () => ({ forged: true });
      Object.defineProperty(Object.prototype, 'ok', { get() { return true; }, configurable: true });
      // A value that serializes to a system path, whatever it looks like here.
      const sneaky = { path: '/tmp/notes.txt', toJSON() { return { path: '/etc/passwd' }; } };
      let denied;
      try { await tools.read_file(sneaky); } catch (error) { denied = error.code; }
      const price = await tools.lookup_price({ item: 'abc' });
      Object.prototype.toJSON = function () { return 'the host sees only the program\\'s own value'; };
      return { denied, price };
    `);
    expect(result.isError).toBe(false);
    // The host's record of the sub-calls is its own; the program shaped only its own result.
    expect(value(result).calls.map((call) => [call.name, call.code ?? 'ok'])).toEqual([['read_file', 'PERMISSION_DENIED'], ['lookup_price', 'ok']]);
    expect(value(result).result).toBe("the host sees only the program's own value");
    expect(h.seen.secretRuns).toBe(0);
    // The same tenant's next program starts from clean intrinsics too.
    const next = await h.run('return [typeof Object.prototype.toJSON, [1].concat(2)];', { tenant: 'mallory' });
    expect(value(next).result).toEqual(['undefined', [1, 2]]);
    await expectNeighbourServed();
  });
});

describe('sub-call floods and loops', () => {
  it('a flood past the total cap: the first 20 calls reach the pipeline, every other one is refused TOO_MANY_CALLS', async () => {
    const before = h.seen.calls.length;
    const result = await attack(`
      let ok = 0; const refused = new Set(); let refusedCount = 0;
      await Promise.all(Array.from({ length: 200 }, () => tools.lookup_price({ item: 'a' }).then(() => { ok += 1; }, (error) => { refused.add(error.code); refusedCount += 1; })));
      return { ok, refusedCount, codes: [...refused] };
    `);
    expect(value(result).result).toEqual({ ok: 20, refusedCount: 180, codes: ['TOO_MANY_CALLS'] });
    expect(value(result).calls).toHaveLength(20);
    expect(h.seen.calls.length - before).toBe(20);
    await expectNeighbourServed();
  });

  it('a denied tool called in a loop: denied each time, never run, and stopped at the cap', async () => {
    const result = await attack(`
      let denied = 0;
      for (let i = 0; i < 100000; i += 1) {
        try { await tools.read_file({ path: '/etc/passwd' }); } catch (error) {
          if (error.code === 'PERMISSION_DENIED') denied += 1;
          else return { denied, stoppedBy: error.code };
        }
      }
      return { denied };
    `);
    expect(value(result).result).toEqual({ denied: 20, stoppedBy: 'TOO_MANY_CALLS' });
    expect(h.seen.secretRuns).toBe(0);
    await expectNeighbourServed();
  });

  it('a sub-call left running when the program returns is cancelled before the result, and answers nothing after', async () => {
    const abortedBefore = h.seen.aborted;
    const startedBefore = h.seen.calls.filter((call) => call.name === 'slow').length;
    // A short spin after the call gives the host time to see it (either way is checked below).
    const result = await attack('tools.slow({}).then(() => console.log("late")); const until = Date.now() + 50; while (Date.now() < until); return "returned";');
    expect(value(result).result).toBe('returned');
    // Either the host saw the call before the program ended (then it was cancelled and
    // answered ABORTED before this result existed), or it arrived after and was refused unrun.
    const calls = value(result).calls;
    const reached = calls.length;
    expect(calls).toEqual(reached === 0 ? [] : [expect.objectContaining({ name: 'slow', isError: true, code: 'ABORTED' })]);
    // When the program's result exists, nothing of it still runs on the host.
    expect(h.seen.running).toBe(0);
    expect(h.seen.aborted).toBe(abortedBefore + reached);
    expect((result as ToolSuccess).content).toBe('"returned"');
    await expectNeighbourServed();
    // Nothing started late either: every start of the tool is the one the program's value reports.
    expect(h.seen.calls.filter((call) => call.name === 'slow').length - startedBefore).toBe(reached);
    expect(h.seen.finishedAfterAbort).toBe(0);
  });

  it('a call flood the program does not wait for ends with the program; at most the cap reached the pipeline', async () => {
    const before = h.seen.calls.length;
    const result = await attack('for (let i = 0; i < 5000; i += 1) tools.lookup_price({ item: "a" }).catch(() => {}); return "returned";');
    expect(value(result).result).toBe('returned');
    expect(value(result).calls.length).toBeLessThanOrEqual(20);
    expect(h.seen.calls.length - before).toBeLessThanOrEqual(20);
    expect(h.seen.running).toBe(0);
    await expectNeighbourServed();
  });
});
