// Values nested thousands of levels deep, from a plugin: past what a thread's stack takes, a
// recursive walk throws RangeError wherever it runs. Each is reported as what it is (a schema
// too deep, a result that is not JSON), never as an unexpected failure or a crash.
import { createEngine, type ToolFailure } from '@airlock/core';
import { createSandbox, SandboxError } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

/** A plugin folder whose one tool has `parameters` nested `schemaDepth` levels and returns a value nested `resultDepth` levels. */
async function deepPlugin(schemaDepth: number, resultDepth: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-deep-'));
  folders.push(dir);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'deep', module: './index.js', limits: { timeoutMs: 5000, cpuMs: 3000 } }));
  await writeFile(join(dir, 'index.js'), `
    let parameters = { type: 'object' };
    for (let i = 1; i < ${schemaDepth}; i += 1) parameters = { type: 'object', properties: { a: parameters } };
    export default { tools: [{ name: 'deep', description: 'Returns a deep value.', parameters, execute() {
      let value = 1;
      for (let i = 0; i < ${resultDepth}; i += 1) value = { a: value };
      return value;
    } }] };`);
  return dir;
}

async function loadProblems(dir: string): Promise<readonly string[]> {
  const sandbox = createSandbox({ processes: 1 });
  try {
    await sandbox.loadPlugins([dir]);
    return [];
  } catch (error) {
    if (!SandboxError.isInstance(error)) throw error;
    return error.problems;
  } finally {
    await sandbox.close();
  }
}

describe('values nested thousands of levels deep', () => {
  it('a tool schema 5,000 levels deep is a plugin problem that names the depth allowed', async () => {
    const problems = await loadProblems(await deepPlugin(5_000, 1));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/nesting deeper than 256$/);
  });

  it('a tool schema 12,000 levels deep is a plugin problem too, not a crash', async () => {
    // Past a worker thread's stack on Node 20 (the tool list cannot be read there), within it on Node 26.
    const problems = await loadProblems(await deepPlugin(12_000, 1));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/nested too deeply to read|nesting deeper than 256$/);
    expect(problems[0]).not.toContain('SANDBOX_CRASH');
  });

  it('a tool schema 100,000 levels deep, past the realm\'s own stack, is the same problem', async () => {
    const problems = await loadProblems(await deepPlugin(100_000, 1));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('INVALID_TOOL_OUTPUT: the tool list is nested too deeply to read');
  });

  it('a result 100,000 levels deep is INVALID_TOOL_OUTPUT, not a tool error', async () => {
    const sandbox = createSandbox({ processes: 1 });
    try {
      await sandbox.loadPlugins([await deepPlugin(1, 100_000)]);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
      const [result] = await engine.run([{ id: 'c', name: 'deep', arguments: '{}' }]);
      expect((result as ToolFailure).error).toMatchObject({ code: 'INVALID_TOOL_OUTPUT', message: expect.stringContaining('nested too deeply') });
    } finally {
      await sandbox.close();
    }
  });
});
