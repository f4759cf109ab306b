// Programs and their sub-calls share the sandbox's threads without starving each other: a
// program waiting for its sub-calls must not hold the thread they need. With as many
// programs as the pool has threads (one per tenant), every program still completes, and
// another tenant's plain sandboxed call is answered meanwhile.
import { describe, expect, it } from 'vitest';
import { createEngine, type ToolFailure, type ToolSuccess } from '@airlock/core';
import { createCodeMode, createSandbox } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { pluginFolder } from './support/plugin-harness.js';

describe('programs cannot starve their own sub-calls or other tenants', () => {
  for (const threads of [2, 3]) {
    it(`threads=${threads}: ${threads + 2} programs of different tenants, each making sub-calls, all complete; a plain call is answered meanwhile`, async () => {
      const dir = await pluginFolder('code-mode/inventory.js', { limits: { memoryMb: 16, timeoutMs: 2000, cpuMs: 200 } });
      const sandbox = createSandbox({ threads, processes: 1 });
      try {
        await sandbox.loadPlugins([dir]);
        const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
        // A wall clock far above what a program needs, far below the test's timeout: a deadlock ends as TIMEOUT.
        const codeMode = createCodeMode({ engine, sandbox, limits: { timeoutMs: 8000 } });
        const programs = Array.from({ length: threads + 2 }, async (_, i) => {
          const tenant = `tenant-${i}`;
          const outer = createEngine({ tools: [codeMode.tool({ tenant })], policy: { default: 'allow' } });
          const [result] = await outer.run([{ id: `p${i}`, name: 'run_code', arguments: { code: 'const a = await tools.stock_level({ item: "apples" }); const b = await tools.stock_level({ item: "plums" }); return a.count + b.count;' } }], { tenant });
          return result;
        });
        const [plain] = await engine.run([{ id: 'plain', name: 'stock_level', arguments: { item: 'apples' } }], { tenant: 'bystander' });
        expect((plain as ToolFailure).error).toBeUndefined();
        expect((plain as ToolSuccess).value).toEqual({ item: 'apples', count: 12 });
        for (const result of await Promise.all(programs)) {
          expect((result as ToolFailure).error).toBeUndefined();
          expect(((result as ToolSuccess).value as { result: unknown }).result).toBe(19);
        }
      } finally {
        await sandbox.close();
        await rm(dir, { recursive: true, force: true });
      }
    }, 30_000);
  }
});
