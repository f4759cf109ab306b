// Its own file, so its own process: Node warns about an over-listened signal only once
// per signal, and calls without a caller signal all share core's never-aborting one. In a
// file where another test had already tripped that warning, this one could not go red.
import { createEngine, type ToolResult } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

const code = (result: ToolResult): string => (result.isError ? result.error.code : 'ok');

describe('waiting calls and abort listeners', () => {
  it('40 calls waiting for one thread raise no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    const dir = await pluginFolder('plugins/timed.js', { name: 'timed', limits: { cpuMs: 10_000, timeoutMs: 20_000 } });
    const sandbox = createSandbox({ threads: 1, processes: 1, fairShare: { reserveThreads: 0 } });
    try {
      await sandbox.loadPlugins([dir]);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, preSchedule: sandbox.preSchedule });
      // No caller signal: every call's execute signal is the same shared never-aborting one.
      const turns = await Promise.all(Array.from({ length: 40 }, (_, i) => engine.run([{ id: `c${i}`, name: 'timed', arguments: '{"ms":0}' }])));
      expect(turns.flat().map(code).every((c) => c === 'ok')).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
