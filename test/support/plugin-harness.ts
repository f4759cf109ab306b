// Builds throwaway plugin folders from fixture modules and runs calls against them
// through the real engine and sandbox, exactly as a user would.
import { createEngine, type Engine, type JsonValue, type ToolResult } from '@airlock/core';
import { createSandbox, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { createTestSandbox, type TestingHooks } from '@airlock/sandbox/testing';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

export interface HarnessLimits {
  memoryMb?: number;
  timeoutMs?: number;
  cpuMs?: number;
  maxOutputBytes?: number;
}

export interface Harness {
  readonly sandbox: Sandbox;
  readonly engine: Engine;
  readonly dir: string;
  call(tool: string, args?: JsonValue | string, tenant?: string): Promise<{ results: ToolResult[]; elapsedMs: number }>;
  close(): Promise<void>;
}

let counter = 0;

export async function pluginFolder(fixture: string, manifest: Record<string, unknown> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-plugin-'));
  await copyFile(join(FIXTURES, fixture), join(dir, 'index.js'));
  counter += 1;
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: `fixture-${counter}`, module: './index.js', ...manifest }));
  return dir;
}

export async function harness(fixture: string, limits: HarnessLimits = {}, options: SandboxOptions & { manifest?: Record<string, unknown> } = {}): Promise<Harness> {
  const { manifest, ...sandboxOptions } = options;
  const dir = await pluginFolder(fixture, { limits: { memoryMb: 16, timeoutMs: 1000, cpuMs: 200, ...limits }, ...manifest });
  const sandbox = createSandbox({ threads: 2, ...sandboxOptions });
  try {
    await sandbox.loadPlugins([dir]);
  } catch (error) {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // As an embedder wires it: the manifest's permissions come with the tools.
  const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
  return {
    sandbox,
    engine,
    dir,
    async call(tool, args = {}, tenant) {
      const started = performance.now();
      const results = await engine.run([{ id: `call-${tool}`, name: tool, arguments: typeof args === 'string' ? args : JSON.stringify(args) }], tenant === undefined ? {} : { tenant });
      return { results, elapsedMs: performance.now() - started };
    },
    async close() {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One fixture plugin in a test sandbox (fault injection and other testing hooks allowed),
 * and an engine over it with the sandbox's classifiers: for tests of tenancy and faults.
 */
export async function openTestSandbox(
  fixture: string,
  manifest: Record<string, unknown>,
  options: SandboxOptions & TestingHooks,
  observers: Parameters<typeof createEngine>[0]['observers'] = {},
): Promise<{ sandbox: Sandbox; engine: Engine; close: () => Promise<void> }> {
  const dir = await pluginFolder(fixture, manifest);
  const sandbox = createTestSandbox(options);
  const close = async (): Promise<void> => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await sandbox.loadPlugins([dir]);
  } catch (error) {
    await close();
    throw error;
  }
  return { sandbox, engine: createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, preSchedule: sandbox.preSchedule, observers }), close };
}
