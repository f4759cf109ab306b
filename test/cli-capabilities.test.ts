// The CLI's standard capabilities: the demo's write_file writes into the workspace folder it
// names, --kv persists, and bad values of either flag are one-line usage errors.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airlock, oneLine } from './support/run-cli.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'airlock-cli-caps-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('--workspace and --kv', () => {
  it('the bundled example writes for real into the workspace, says where, and /etc/hosts stays denied', async () => {
    const workspace = join(base, 'ws');
    const { code, stdout, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', '--workspace', workspace, '--tenant', 'acme', '--json']);
    expect(code).toBe(0);
    const results = JSON.parse(stdout).results as { callId: string; isError: boolean; error?: { code: string } }[];
    expect(results.find((result) => result.callId === 'call_save')).toMatchObject({ isError: false });
    expect(results.find((result) => result.callId === 'call_hosts')).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    expect(await readFile(join(workspace, 'acme', 'notes', 'release-0.1.md'), 'utf8')).toBe('# Airlock 0.1\n\nSandboxed plugins.');
    expect(stderr).toContain(`airlock: workspace files are in ${join(workspace, 'acme')}`);
  });

  it('checks a plugin granted kv only when --kv offers it', async () => {
    const plugin = join(base, 'kv-plugin');
    await mkdir(plugin);
    await writeFile(join(plugin, 'index.js'), "export default { tools: [{ name: 'remember', description: 'r', parameters: { type: 'object' }, execute: (_a, ctx) => ctx.capabilities['kv.set']({ key: 'k', value: 1 }) }] };");
    await writeFile(join(plugin, 'airlock.plugin.json'), JSON.stringify({ name: 'mem', module: './index.js', capabilities: ['kv'], kv: { maxBytes: 1000 } }));
    const without = await airlock(['check', plugin]);
    expect(without.code).toBe(1);
    expect(without.stdout).toContain('capabilities.0 names "kv", which this host does not offer');
    const withKv = await airlock(['check', plugin, '--kv', join(base, 'state.sqlite')]);
    expect(withKv.code).toBe(0);
  });

  it.each([
    [['--workspace', ''], '--workspace must name a folder'],
    [['--workspace', 'package.json'], '--workspace package.json: not a folder'],
    [['--kv', ''], '--kv must name a file'],
    [['--kv', 'examples'], '--kv examples: not a file'],
  ])('%j is exit 2 with one line', async (flags, message) => {
    const { code, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', ...flags]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(message);
  });

  it('--help names both flags', async () => {
    const { stdout } = await airlock(['run', '--help']);
    expect(stdout).toContain('--workspace <dir>');
    expect(stdout).toContain('--kv <file>');
  });
});
