// Workers build isolates and realms ahead while idle (for the next new tenant, and for the
// next call after a kill). What is built ahead has run no plugin code and belongs to nobody
// until a tenant takes it: a new tenant's first call and the call after a kill each find a
// realm whose top level ran once, in that call, with nothing of any other tenant or call in it.
import { createEngine, type Engine, type ToolResult } from '@airlock/core';
import { createSandbox, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

let sandbox: Sandbox | undefined;
let dir: string | undefined;

afterEach(async () => {
  await sandbox?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function open(options: SandboxOptions): Promise<Engine> {
  dir = await pluginFolder('plugins/marker.js', { realm: 'warm', limits: { cpuMs: 100, timeoutMs: 2000 } });
  sandbox = createSandbox({ threads: 1, fairShare: { reserveThreads: 0 }, ...options });
  await sandbox.loadPlugins([dir]);
  return createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
}

const value = (results: readonly ToolResult[]): unknown => {
  const [result] = results;
  if (result === undefined || result.isError) throw new Error(`expected a value, got ${JSON.stringify(result)}`);
  return (result as unknown as { value: unknown }).value;
};
const code = (results: readonly ToolResult[]): string | undefined => {
  const [result] = results;
  return result !== undefined && result.isError ? result.error.code : undefined;
};

describe.each([['in-process' as const], ['process' as const]])('building ahead, %s mode', (mode) => {
  it('a new tenant, and a tenant after a kill, each get a realm of their own whose top level ran once', async () => {
    const engine = await open(mode === 'in-process' ? { mode } : { processes: 1 });
    const call = (name: string, tenant: string, args: object = {}): Promise<ToolResult[]> => engine.run([{ id: `${tenant}-${name}`, name, arguments: JSON.stringify(args) }], { tenant });
    expect(value(await call('mark', 'a', { mark: 'secret-a' }))).toEqual({ ok: true });
    expect(value(await call('read', 'a'))).toEqual({ mark: 'secret-a', topLevelRuns: 1 });
    for (const tenant of ['b', 'c', 'd']) {
      expect(value(await call('read', tenant))).toEqual({ mark: null, topLevelRuns: 1 });
      expect(value(await call('mark', tenant, { mark: `secret-${tenant}` }))).toEqual({ ok: true });
    }
    expect(code(await call('spin', 'a'))).toBe('CPU_LIMIT');
    // The isolate that was killed is gone; its tenant's next call starts clean, and is served.
    expect(value(await call('read', 'a'))).toEqual({ mark: null, topLevelRuns: 1 });
    expect(value(await call('read', 'e'))).toEqual({ mark: null, topLevelRuns: 1 });
  });
});
