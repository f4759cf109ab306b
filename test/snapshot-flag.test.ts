// isolated-vm needs --no-node-snapshot on Node 20+: the in-process sandbox refuses to
// start without it, with a message that says what to do; the default mode supplies it.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/run-cli.js';

function runWithoutFlag(source: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env, NODE_OPTIONS: '' };
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: `${ROOT}test`, env, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('--no-node-snapshot', () => {
  it('the in-process mode refuses to start without it, saying what to do', () => {
    const { stdout } = runWithoutFlag(`
      import { createSandbox } from '@airlock/sandbox';
      try { createSandbox({ mode: 'in-process' }); console.log('started'); }
      catch (error) { console.log(error.code + ': ' + error.message); }
    `);
    expect(stdout).toMatch(/^SNAPSHOT_FLAG_MISSING: isolated-vm needs Node to run with --no-node-snapshot/);
  });

  it('the default process mode supplies the flag to its child and runs plugins from a process without it', () => {
    const { stdout } = runWithoutFlag(`
      import { createSandbox } from '@airlock/sandbox';
      import { createEngine } from '@airlock/core';
      const sandbox = createSandbox();
      await sandbox.loadPlugins(['../examples/plugins/text']);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
      const [result] = await engine.run([{ id: 'c', name: 'slugify', arguments: '{"text":"Flag Free"}' }]);
      console.log(JSON.stringify(result.value));
      await sandbox.close();
    `);
    expect(stdout.trim()).toBe('"flag-free"');
  });
});
