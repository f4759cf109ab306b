// A manifest's limits.maxOutputBytes holds end to end: above the engine's default 1 MiB
// when the manifest says so, and still enforced at the manifest's own value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type ToolFailure, type ToolSuccess } from '@airlock/core';
import { createSandbox, type Sandbox } from '@airlock/sandbox';

const MIB = 1024 * 1024;
let sandbox: Sandbox;
let engine: Engine;

beforeAll(async () => {
  sandbox = createSandbox({ threads: 1 });
  await sandbox.loadPlugins([new URL('./fixtures/output-limit/big-output', import.meta.url).pathname]);
  engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
});

afterAll(async () => {
  await sandbox.close();
});

describe('a plugin\'s maxOutputBytes (4 MiB) under the engine\'s default limit (1 MiB)', () => {
  it('a 2 MiB result comes back whole', async () => {
    const [result] = await engine.run([{ id: 'c1', name: 'big_text', arguments: JSON.stringify({ bytes: 2 * MIB }) }]);
    expect(result!.isError).toBe(false);
    expect(result!.content.length).toBeGreaterThan(2 * MIB);
  });

  it('a 5 MiB result is OUTPUT_TOO_LARGE at the manifest\'s limit', async () => {
    const [result] = await engine.run([{ id: 'c2', name: 'big_text', arguments: JSON.stringify({ bytes: 5 * MIB }) }]);
    expect((result as ToolFailure).error.code).toBe('OUTPUT_TOO_LARGE');
    // maxOutputBytes is host-only: the message the model reads says there is a limit, not which.
    expect((result as ToolFailure).error.message).toContain('larger than this tool may return');
    expect((result as ToolFailure).content).not.toContain(String(4 * MIB));
  });
});

describe('maxOutputBytes is exact: a result of the limit passes, one byte more does not', () => {
  let exact: Sandbox;
  let exactEngine: Engine;
  beforeAll(async () => {
    const { pluginFolder } = await import('./support/plugin-harness.js');
    exact = createSandbox({ threads: 1 });
    await exact.loadPlugins([await pluginFolder('output-limit/exact.js', { limits: { maxOutputBytes: 1024 } })]);
    exactEngine = createEngine({ sources: [exact], policy: { default: 'allow' } });
  });
  afterAll(async () => {
    await exact.close();
  });
  const outcome = async (name: string, args: object): Promise<string> => {
    const [result] = await exactEngine.run([{ id: name, name, arguments: JSON.stringify(args) }]);
    return result!.isError ? (result as ToolFailure).error.code : `ok ${result!.content.length}`;
  };

  it.each([
    // {"k…k":null}: a key of n letters, its quotes and colon, null and the braces: n + 9 bytes.
    ['keyed', { letters: 1024 - 9 }, 'ok 1024', { letters: 1024 - 8 }],
    // [null,…]: the first element costs no comma: 5n + 1 bytes.
    ['nulls', { count: 204 }, 'ok 1021', { count: 205 }],
    // "\n\n…": two bytes each (not \u000a's six), and the quotes: 2n + 2 bytes.
    ['newlines', { count: 511 }, 'ok 1024', { count: 512 }],
  ])('%s', async (name, fits, answer, over) => {
    expect(await outcome(name, fits)).toBe(answer);
    expect(await outcome(name, over)).toBe('OUTPUT_TOO_LARGE');
  });
});

describe('objects and arrays in a result are bounded as its bytes are (the host parses each on the main thread every tenant shares)', () => {
  let counted: Sandbox;
  let countedEngine: Engine;
  beforeAll(async () => {
    const { pluginFolder } = await import('./support/plugin-harness.js');
    counted = createSandbox({ threads: 1 });
    await counted.loadPlugins([await pluginFolder('output-limit/containers.js', { capabilities: ['log'] })]);
    countedEngine = createEngine({ sources: [counted], policy: { default: 'allow' } });
  });
  afterAll(async () => {
    await counted.close();
  });
  const run = async (name: string, count: number) => (await countedEngine.run([{ id: name, name, arguments: JSON.stringify({ count }) }]))[0]!;

  it('100,000 pass, one more is OUTPUT_TOO_LARGE', async () => {
    // The outer array is one: 99,999 empty objects and it make 100,000.
    expect((await run('empties', 99_999)).isError).toBe(false);
    const refused = await run('empties', 100_000);
    expect((refused as ToolFailure).error?.code).toBe('OUTPUT_TOO_LARGE');
    expect(refused.content).toContain('more than 100000 objects and arrays');
  });

  it('braces inside strings are text, not counted', async () => {
    const result = await run('braces', 300_000);
    expect(result.isError).toBe(false);
    expect(result.content.length).toBeGreaterThan(600_000);
  });

  it('a capability request is bounded the same way: refused in the realm, the call goes on', async () => {
    expect((await run('ask_many', 1_000)).content).toBe('"sent"');
    expect((await run('ask_many', 100_000)).content).toMatch(/^"refused: /);
  });

  it('so are one call\'s requests in all: a million objects and arrays, 64 MiB', async () => {
    const outcomes = async (args: Record<string, number>) => (await countedEngine.run([{ id: 'r', name: 'ask_repeatedly', arguments: JSON.stringify(args) }]))[0] as ToolSuccess;
    // Each request: its argument object, the data array and 99,000 objects.
    expect((await outcomes({ count: 99_000, times: 11 })).value).toEqual([...new Array(10).fill('ok'), 'TOO_MANY_REQUESTS']);
    const long = (await outcomes({ chars: 1_040_000, times: 66 })).value as string[];
    expect(long.slice(62)).toEqual(['ok', 'ok', 'TOO_MANY_REQUESTS', 'TOO_MANY_REQUESTS']);
  });
});
