// One hostile fixture per attack class. Each test asserts the result code, that
// exactly one result came back, that the deadline held (within about twice the
// budget), and that a benign call to the same plugin works right after.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolFailure, ToolResult, ToolSuccess } from '@airlock/core';
import { SandboxError } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { harness, pluginFolder, type Harness } from './support/plugin-harness.js';
import { airlock } from './support/run-cli.js';

const LIMITS = { memoryMb: 16, timeoutMs: 1000, cpuMs: 200, maxOutputBytes: 65536 };
/** Fixed allowance for the process hop and realm creation on a loaded machine. */
const HOP_MS = 400;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

let open: Harness | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function attack(fixture: string, limits = LIMITS): Promise<{ result: ToolResult; elapsedMs: number; h: Harness }> {
  const h = await harness(`hostile/${fixture}`, limits);
  open = h;
  const { results, elapsedMs } = await h.call('attack');
  expect(results).toHaveLength(1);
  return { result: results[0]!, elapsedMs, h };
}

async function expectBenignAfter(h: Harness): Promise<void> {
  const { results } = await h.call('benign', { text: 'still here' });
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({ isError: false, value: { echoed: 'still here' } });
}

const code = (result: ToolResult) => (result as ToolFailure).error?.code;

describe('CPU attacks end as CPU_LIMIT within about twice the CPU budget', () => {
  it.each(['infinite-loop.js', 'microtask-flood.js', 'async-loop.js', 'redos.js'])('%s', async (fixture) => {
    const { result, elapsedMs, h } = await attack(fixture);
    expect(code(result)).toBe('CPU_LIMIT');
    expect(elapsedMs).toBeLessThan(2 * LIMITS.cpuMs + HOP_MS);
    // Reported as what it burnt (an embedder bills by it), not as unknown because the isolate is gone.
    expect(result.metadata?.cpuMs).toBeGreaterThanOrEqual(LIMITS.cpuMs / 2);
    await expectBenignAfter(h);
  });
});

describe('wall clock', () => {
  it('never-settles.js: a promise that never settles ends as TIMEOUT at the deadline', async () => {
    const { result, elapsedMs, h } = await attack('never-settles.js');
    expect(code(result)).toBe('TIMEOUT');
    expect(elapsedMs).toBeGreaterThanOrEqual(LIMITS.timeoutMs - 5);
    expect(elapsedMs).toBeLessThan(2 * LIMITS.timeoutMs);
    await expectBenignAfter(h);
  });
});

describe('memory attacks end as MEMORY_LIMIT and the sandbox survives', () => {
  it.each(['heap-growth.js', 'huge-strings.js'])('%s', async (fixture) => {
    const { result, elapsedMs, h } = await attack(fixture, { ...LIMITS, cpuMs: 5000, timeoutMs: 10_000 });
    expect(code(result)).toBe('MEMORY_LIMIT');
    expect(elapsedMs).toBeLessThan(2 * 10_000);
    await expectBenignAfter(h);
  });

  it('huge-array.js: V8 running out of memory past recovery ends as MEMORY_LIMIT, in the sandbox process, not the embedder; the next call works', async () => {
    // Run through the binary so the dying sandbox process's stderr (V8's heap report and
    // our abort line) is captured here, checked, and kept out of the test run's output.
    const dir = await pluginFolder('hostile/huge-array.js', { limits: { ...LIMITS, cpuMs: 5000, timeoutMs: 10_000 }, permissions: { default: 'allow' } });
    try {
      const transcript = { role: 'assistant', tool_calls: [['c1', 'attack'], ['c2', 'benign']].map(([id, name]) => ({ id, type: 'function', function: { name, arguments: '{"text":"still here"}' } })) };
      const { code: exit, stdout, stderr } = await airlock(['run', '-', '--plugins', dir, '--json'], { input: JSON.stringify(transcript) });
      expect(exit).toBe(0); // the embedder (the CLI) is still here
      const [attacked, benign] = (JSON.parse(stdout) as { results: ToolResult[] }).results;
      // Up to Node 22, V8 gives up on the isolate (a catastrophe, captured here with its
      // report: the process retires, see zombies.test.ts); from Node 24 isolated-vm disposes
      // the isolate at its heap limit.
      expect(code(attacked!)).toBe('MEMORY_LIMIT');
      expect(benign).toMatchObject({ isError: false, value: { echoed: 'still here' } });
      if (NODE_MAJOR < 24) expect(stderr).toMatch(/catastrophic isolate failure|Last few GCs|terminate called|FATAL ERROR/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['split-empty', 'TOOL_ERROR'],
    ['split-this-object', 'TOOL_ERROR'],
    ['replace-function', 'TOOL_ERROR'],
    ['symbol-replace', 'TOOL_ERROR'],
    ['sort-array-like', 'TOOL_ERROR'],
    ['to-sorted-array-like', 'TOOL_ERROR'],
    ['sort-sparse-array', 'TOOL_ERROR'],
    ['to-sorted-sparse-array', 'TOOL_ERROR'],
    // A length that lies reads once, as the spec reads it: the sort sees the 0 its check saw.
    ['sort-getter-length', 'ok'],
    ['sort-value-of-length', 'ok'],
    ['sort-proxy-array', 'TOOL_ERROR'],
    ['sort-revocable-proxy', 'TOOL_ERROR'],
    ['sort-proxy-lying', 'ok'],
    ['to-sorted-proxy-lying', 'ok'],
    ['sort-reflect-construct-proxy', 'TOOL_ERROR'],
  ])('invalid-size.js %s: answered %s, never a process abort: a result past V8\'s array limit is refused', async (which, expected) => {
    const h = await harness('hostile/invalid-size.js', { ...LIMITS, cpuMs: 5000, timeoutMs: 10_000 });
    open = h;
    const { results } = await h.call('attack', { which });
    expect(results).toHaveLength(1);
    expect(code(results[0]!) ?? 'ok').toBe(expected);
    if (expected === 'TOOL_ERROR') expect((results[0] as ToolFailure).error.message).toContain('elements, more than V8 can make');
    await expectBenignAfter(h);
  });

  it('invalid-size.js json-parse: a text with more commas than V8 can make elements is refused, not a process abort', async () => {
    // Counting its commas flattens the rope: 256 MiB, within this plugin's limit, so the guard
    // itself answers. (Past a small plugin's limit the flatten is MEMORY_LIMIT; on Node 26, V8
    // then sometimes fails an internal check in that out-of-memory path and aborts the process.)
    const h = await harness('hostile/invalid-size.js', { ...LIMITS, memoryMb: 512, cpuMs: 5000, timeoutMs: 10_000 });
    open = h;
    const { results } = await h.call('attack', { which: 'json-parse' });
    expect(results).toHaveLength(1);
    expect(code(results[0]!)).toBe('TOOL_ERROR');
    expect((results[0] as ToolFailure).error.message).toContain('JSON.parse');
    await expectBenignAfter(h);
  });

  // Memory no heap limit counts (ICU's, or V8's parser's): each bound refuses the costly input
  // with a RangeError that says why, and the builtin behaves as ever below it.
  it.each([
    ['normalize: a text whose normal form could pass 2^24 characters', ['normalize-nfkd', 'normalize-this-object'], 'String.prototype.normalize: the', 'normalize-small', 2 + 18 + 1],
    ['regexp: a pattern with more than 1,000 \\p{...} classes, made or recompiled', ['regexp-property-classes', 'regexp-compile-property-classes'], 'RegExp: the pattern holds more than 1000', 'regexp-small', 'true,true,true,g,c,y'.length],
    ['list-format: a list whose items hold more than 2^24 characters', ['list-format', 'list-format-parts'], 'Intl.ListFormat: the items hold', 'list-format-small', 'a, b, and c'.length],
    ['parser memory: a pattern past 524,288 characters (made, or inside match, matchAll or search), code made from text past 524,288 characters or 1,000 \\p{...} classes', ['regexp-long-pattern', 'regexp-long-match', 'regexp-search-classes', 'function-long-source', 'eval-long-source', 'async-function-long-source', 'function-property-classes', 'regexp-classes-iterator-emptied'], 'the heap limit does not count', 'codegen-small', 37],
    ['icu-text: texts past 2^24 characters compared or case-mapped by locale', ['collator-compare', 'locale-compare', 'locale-upper-case'], 'whose copies in ICU the heap limit does not count', 'icu-small', 98],
    ['icu-locales: a locale tag, or a list of them, past 65,536 characters', ['canonical-locales', 'locale-constructor', 'locale-tag-object', 'supported-locales-of', 'number-to-locale-string', 'temporal-to-locale-string', 'locale-list-references'], 'Intl: a locale', 'icu-small', 98],
    ['icu-options: an option or a name past 65,536 characters, given as it is, by an object or by a getter', ['time-zone-option', 'option-object', 'option-getter', 'display-names-of', 'relative-time-unit', 'supported-values-of', 'date-to-locale-string'], 'whose copies in ICU the heap limit does not count', 'icu-small', 98],
  ] as const)('invalid-size.js %s is refused (its memory is off the heap); a small one works as ever', async (_case, attacks, refusal, small, smallLength) => {
    const h = await harness('hostile/invalid-size.js', { ...LIMITS, cpuMs: 5000, timeoutMs: 10_000 });
    open = h;
    for (const which of attacks) {
      const { results } = await h.call('attack', { which });
      expect(code(results[0]!)).toBe('TOOL_ERROR');
      expect((results[0] as ToolFailure).error.message).toContain(refusal);
    }
    const { results } = await h.call('attack', { which: small });
    expect((results[0] as ToolSuccess).value).toBe(smallLength);
    await expectBenignAfter(h);
  });

  it('array-buffers.js: the isolate allocator refuses buffers past the limit', async () => {
    const { result, h } = await attack('array-buffers.js', { ...LIMITS, cpuMs: 5000, timeoutMs: 10_000 });
    expect(code(result)).toBe('TOOL_ERROR');
    expect((result as ToolFailure).error.message).toContain('Array buffer allocation failed');
    await expectBenignAfter(h);
  });

  it('webassembly-memory.js: WebAssembly is absent unless granted', async () => {
    const { result, h } = await attack('webassembly-memory.js');
    expect(code(result)).toBe('TOOL_ERROR');
    expect((result as ToolFailure).error.message).toContain('WebAssembly is not defined');
    await expectBenignAfter(h);
  });
});

describe('output attacks', () => {
  it.each([
    ['huge-output.js', 'OUTPUT_TOO_LARGE'],
    ['cyclic-output.js', 'INVALID_TOOL_OUTPUT'],
    ['non-json-output.js', 'INVALID_TOOL_OUTPUT'],
    ['spinning-getter.js', 'CPU_LIMIT'],
    ['spinning-tojson.js', 'CPU_LIMIT'],
    ['spinning-proxy.js', 'CPU_LIMIT'],
    ['hostile-thrown-spinning.js', 'CPU_LIMIT'],
  ])('%s ends as %s', async (fixture, expected) => {
    const { result, elapsedMs, h } = await attack(fixture);
    expect(code(result)).toBe(expected);
    expect(elapsedMs).toBeLessThan(2 * LIMITS.timeoutMs);
    await expectBenignAfter(h);
  });

  it('lossy-output.js: what JSON would drop or write as null is refused, naming where; a toJSON is honoured, an undefined key is absent', async () => {
    const h = await harness('hostile/lossy-output.js', LIMITS);
    open = h;
    const refused: [string, string][] = [
      ['function', 'a function at key "f"'],
      ['nan', 'NaN at key "n"'],
      ['undefined', 'undefined at index 1'],
      ['map', 'an object that is neither a plain object nor an array at key "m"'],
      ['symbol-key', 'an object with a symbol-keyed property at the top'],
    ];
    for (const [which, where] of refused) {
      const { results } = await h.call('attack', { which });
      expect((results[0] as ToolFailure).error).toEqual({ code: 'INVALID_TOOL_OUTPUT', message: `attack: the result is not JSON: ${where}` });
    }
    const { results } = await h.call('attack', { which: 'date' });
    expect(results[0]).toMatchObject({ isError: false, value: { d: '1970-01-01T00:00:00.000Z' } });
    // A key whose value is undefined is absent, in JSON as in JavaScript.
    const { results: absent } = await h.call('attack', { which: 'undefined-key' });
    expect(absent[0]).toMatchObject({ isError: false, value: { kept: 1 } });
    await expectBenignAfter(h);
  });

  it('hostile-thrown-proxy.js: an unreadable thrown value is a plain TOOL_ERROR', async () => {
    const { result, h } = await attack('hostile-thrown-proxy.js');
    expect((result as ToolFailure).error).toMatchObject({ code: 'TOOL_ERROR', message: 'attack: an unreadable error was thrown' });
    await expectBenignAfter(h);
  });

  it('replaced-json.js: replacing JSON and prototypes inside the realm forges nothing', async () => {
    const { result, h } = await attack('replaced-json.js');
    expect(result).toMatchObject({ isError: false, value: 42 });
    await expectBenignAfter(h);
  });

  it('proxy-symbol-tricks.js: traps run inside the isolate; no host state leaks', async () => {
    const { result, h } = await attack('proxy-symbol-tricks.js');
    expect(result).toMatchObject({ isError: false, value: { leaked: 'undefined' } });
    await expectBenignAfter(h);
  });
});

describe('escape attempts', () => {
  it('constructor-chain.js: every constructor chain leads to the isolate\'s own global', async () => {
    const { result, h } = await attack('constructor-chain.js');
    expect(result).toMatchObject({ isError: false, value: { args: [], ctx: [], fn: [], global: [] } });
    await expectBenignAfter(h);
  });

  it('prepare-stack-trace.js: frames hold only plugin code, and the message carries no host path', async () => {
    const { result, h } = await attack('prepare-stack-trace.js');
    expect(code(result)).toBe('TOOL_ERROR');
    const message = (result as ToolFailure).error.message;
    expect(message).not.toContain('HOST PROCESS');
    expect(message).not.toMatch(/node:|\/work\/|node_modules|dist\//);
    await expectBenignAfter(h);
  });

  it('dynamic-import.js: import() of a host module fails inside the isolate', async () => {
    const { result, h } = await attack('dynamic-import.js');
    expect(code(result)).toBe('TOOL_ERROR');
    await expectBenignAfter(h);
  });

  it('leaked-handles.js: nothing of the host is reachable from the global object', async () => {
    const { result, h } = await attack('leaked-handles.js');
    expect(result.isError).toBe(false);
    const { suspicious, globals } = (result as unknown as { value: { suspicious: string[]; globals: string[] } }).value;
    if (suspicious.length > 0) console.error(suspicious);
    expect(suspicious).toEqual([]);
    for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'process', 'require', '__airlock_entry']) expect(globals).not.toContain(name);
    await expectBenignAfter(h);
  });

  it('static-import.js: a module that imports host code does not load, and says why', async () => {
    const error = await harness('hostile/static-import.js').catch((thrown: unknown) => thrown);
    expect(SandboxError.isInstance(error)).toBe(true);
    expect((error as SandboxError).message).toContain('imports "node:fs", a Node module: the sandbox has none');
  });

  it('top-level-loop.js: a module whose top level never finishes does not load', async () => {
    const started = performance.now();
    const error = await harness('hostile/top-level-loop.js').catch((thrown: unknown) => thrown);
    expect((error as SandboxError).message).toContain('CPU_LIMIT');
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('realm persistence and arguments', () => {
  it('realm-persistence.js: each call starts in a fresh realm', async () => {
    const h = await harness('hostile/realm-persistence.js', LIMITS, { threads: 1 });
    open = h;
    const first = await h.call('attack');
    const second = await h.call('attack');
    expect(first.results[0]).toMatchObject({ value: { counter: 0, polluted: null } });
    expect(second.results[0]).toMatchObject({ value: { counter: 0, polluted: null } });
  });

  it('malicious-args.js: a "__proto__" key never reaches the plugin (refused as INVALID_ARGS); a look-alike key arrives as plain data', async () => {
    const h = await harness('hostile/malicious-args.js', LIMITS);
    open = h;
    const refused = await h.call('attack', '{"a": {"__proto__": {"polluted": "yes"}}}');
    expect(refused.results[0]).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS', message: expect.stringContaining('a holds a key named "__proto__"') } });
    const { results } = await h.call('attack', '{"__proto__x": {"polluted": "yes"}, "a": 1}');
    expect(results[0]).toMatchObject({ isError: false, value: { ownKeys: ['__proto__x', 'a'], polluted: null, protoIsObject: true } });
  });

  it('oversized arguments are INVALID_ARGS before they reach the sandbox', async () => {
    const h = await harness('hostile/malicious-args.js', LIMITS);
    open = h;
    const { results } = await h.call('attack', { blob: 'x'.repeat(2 * 1024 * 1024) });
    expect((results[0] as ToolFailure).error.code).toBe('INVALID_ARGS');
    await expectBenignAfter(h);
  });

  it('classifier-spin.js: a spinning classifier only makes its calls exclusive: on two free threads they run one after another', async () => {
    // Two threads, so parallel calls would overlap; a lone call is never classified, so three.
    const h = await harness('hostile/classifier-spin.js', LIMITS, { threads: 2 });
    open = h;
    const started = performance.now();
    const results = await h.engine.run(['a1', 'a2', 'a3'].map((id) => ({ id, name: 'attack', arguments: '{}' })));
    expect(results.map((result) => result.isError)).toEqual([false, false, false]);
    const spans = results.map((result) => (result as unknown as { value: { start: number; end: number } }).value);
    // Exclusive: each call started only after the one before it ended.
    for (let i = 1; i < spans.length; i += 1) expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
    // The spinning classifier was stopped within its small budget, not the call's.
    expect(performance.now() - started).toBeLessThan(3 * 150 + 2000);
    await expectBenignAfter(h);
  });
});
