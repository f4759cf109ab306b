// Workers make their code caches for the realm's helpers and bootstrap again once those have
// run (isolate/script-code-cache.ts), using every helper a plugin's source names once first.
// That work runs in an isolate of the sandbox's own, while the worker is idle: never in a
// tenant's isolate, whose heap and CPU it would be charged to. A plugin that names every
// helper and fills most of a small heap with its module loads and answers in every new
// isolate, as before the caches were made again. (What the caches save is measured by
// `airlock bench`: sandbox.cold_web_globals_vs_cold_tenant_call.)
import { createEngine, type ToolResult } from '@airlock/core';
import { createSandbox, type Sandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * About 2.67 MB of module: most of an 8 MiB heap once compiled and its strings made. The margin
 * is thin on purpose: the first version, which made the caches again in the tenant's isolate,
 * failed from 62,000 rows on Node 20; this one loads up to about 63,000 on Node 26, whose
 * isolates hold more of the realm's own code (64,000 did before the realm grew by its call bounds).
 */
const ROWS = 62_000;

let sandbox: Sandbox | undefined;
let dir: string | undefined;

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function largePluginNamingEveryHelper(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'airlock-code-caches-'));
  const rows = Array.from({ length: ROWS }, (_, i) => JSON.stringify(`row-${String(i).padStart(36, '0')}`)).join(',');
  const source = `// Names every helper, uses none: TextEncoder URL atob structuredClone crypto
const ROWS = [${rows}];
export default { tools: [{ name: 'rows', description: 'Counts its rows.', parameters: { type: 'object' }, execute: () => ({ rows: ROWS.length }) }] };
`;
  await writeFile(join(folder, 'index.js'), source);
  await writeFile(join(folder, 'airlock.plugin.json'), JSON.stringify({ name: 'large-rows', module: './index.js', limits: { memoryMb: 8, cpuMs: 2000, timeoutMs: 5000 } }));
  return folder;
}

const value = (results: readonly ToolResult[]): unknown => {
  const [result] = results;
  if (result === undefined || result.isError) throw new Error(`expected a value, got ${JSON.stringify(result)}`);
  return (result as unknown as { value: unknown }).value;
};

describe.each([['in-process' as const], ['process' as const]])('code caches made again, %s mode', (mode) => {
  it("are never made in a tenant's isolate: a plugin that nearly fills its heap loads and answers in every new isolate", async () => {
    dir = await largePluginNamingEveryHelper();
    sandbox = createSandbox({ threads: 1, ...(mode === 'in-process' ? { mode } : { processes: 1 }) });
    await sandbox.loadPlugins([dir]);
    const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    for (const tenant of ['a', 'b', 'c', 'd']) {
      expect(value(await engine.run([{ id: tenant, name: 'rows', arguments: '{}' }], { tenant }))).toEqual({ rows: ROWS });
      // Idle long enough for the worker to build ahead and make its caches again (about 40 ms).
      await sleep(200);
    }
  });
});
