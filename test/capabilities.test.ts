// Host capabilities: the only host functions a realm can reach, granted by name, JSON
// only, scoped by tenant, failing without host detail, bounded by the call's deadline.
import { createEngine, type Engine, type JsonValue, type ToolFailure } from '@airlock/core';
import { createSandbox, SandboxError, type Capability, type Sandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

const stores = new Map<string, Map<string, JsonValue>>();
/** The signal each kv.slow request was given, by the tenant that asked (each mode uses its own tenants). */
const slowSignals = new Map<string, AbortSignal>();
const capabilities: Record<string, Capability> = {
  'kv.get': (argument, context) => stores.get(context.tenant)?.get((argument as { key: string }).key) ?? null,
  'kv.set': (argument, context) => {
    const { key, value } = argument as { key: string; value: JsonValue };
    if (!stores.has(context.tenant)) stores.set(context.tenant, new Map());
    stores.get(context.tenant)!.set(key, value);
    return true;
  },
  'kv.fail': () => {
    throw new Error('database at /srv/secret/db.sqlite is locked');
  },
  'kv.slow': (_argument, context) => {
    slowSignals.set(context.tenant, context.signal);
    return new Promise(() => undefined);
  },
  'admin.wipe': () => true, // offered by the host, granted to no plugin
};

for (const mode of ['process', 'in-process'] as const) {
  describe(`capabilities (${mode} mode)`, () => {
    let dir: string;
    let sandbox: Sandbox;
    let engine: Engine;
    beforeAll(async () => {
      dir = await pluginFolder('plugins/capabilities.js', { name: 'caps', capabilities: ['kv.get', 'kv.set', 'kv.fail', 'kv.slow'], limits: { timeoutMs: 500 } });
      sandbox = createSandbox({ mode, capabilities });
      await sandbox.loadPlugins([dir]);
      engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
    });
    afterAll(async () => {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    });

    const call = async (name: string, args: JsonValue = {}, tenant = 'acme') => (await engine.run([{ id: name, name, arguments: JSON.stringify(args) }], { tenant }))[0]!;

    it('round-trips JSON through the host, scoped by tenant', async () => {
      expect(await call('remember', { key: 'k', value: { n: 1 } }, 'acme')).toMatchObject({ isError: false, value: { n: 1 } });
      expect(await call('remember', { key: 'k' }, 'acme')).toMatchObject({ value: { n: 1 } });
      expect(await call('remember', { key: 'k' }, 'globex')).toMatchObject({ value: null });
    });

    it('exposes granted names only, as plain functions, with no bridge left on the global', async () => {
      expect(await call('probe')).toMatchObject({ value: { names: ['kv.fail', 'kv.get', 'kv.set', 'kv.slow'], leakedGlobals: [], frozen: true, nullPrototype: true, ungranted: 'undefined' } });
    });

    it('a host failure reaches the plugin as a generic error, without the host\'s message', async () => {
      const result = await call('failing');
      expect(result).toMatchObject({ isError: false, value: 'capability kv.fail failed' });
      expect(JSON.stringify(result)).not.toContain('/srv/secret');
    });

    it('a capability that never answers is ended by the call\'s deadline, and its signal aborts', async () => {
      // A tenant of this mode only: the signal checked is the one this mode's call was given.
      const tenant = `waiter-${mode}`;
      const result = await call('waiting', {}, tenant);
      expect((result as ToolFailure).error.code).toBe('TIMEOUT');
      const signal = slowSignals.get(tenant);
      expect(signal).toBeDefined();
      await expect.poll(() => signal?.aborted).toBe(true);
      expect(await call('remember', { key: 'k' }, 'acme')).toMatchObject({ isError: false });
    });
  });
}

describe('granting', () => {
  it('a manifest that asks for a capability the host does not offer does not load', async () => {
    const dir = await pluginFolder('plugins/capabilities.js', { name: 'greedy', capabilities: ['kv.get', 'fs.read'] });
    const sandbox = createSandbox({ capabilities });
    try {
      const error = await sandbox.loadPlugins([dir]).catch((thrown: unknown) => thrown);
      expect(SandboxError.isInstance(error)).toBe(true);
      expect((error as SandboxError).problems[0]).toMatch(/capabilities\.1 names "fs\.read", which this host does not offer \(it offers admin\.wipe, kv\.fail, kv\.get, kv\.set, kv\.slow, log\)/);
    } finally {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("each plugin's realms carry its own grants, though one worker builds both plugins' realms", async () => {
    // Grants baked into the realm's bootstrap, of equal length: a compile cache keyed by what
    // V8 itself checks (little more than the source's length) would hand one to the other.
    const folders = await Promise.all((['kv.get', 'kv.set'] as const).map(async (grant, index) => {
      const dir = await mkdtemp(join(tmpdir(), 'airlock-grants-'));
      const tool = `names_${index}`;
      await writeFile(join(dir, 'index.js'), `export default { tools: [{ name: '${tool}', description: 'Which capabilities?', parameters: { type: 'object' }, execute: (_args, ctx) => Object.keys(ctx.capabilities) }] };`);
      await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: `grants-${index}`, module: './index.js', capabilities: [grant] }));
      return dir;
    }));
    const sandbox = createSandbox({ mode: 'in-process', threads: 1, capabilities });
    try {
      await sandbox.loadPlugins(folders);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
      for (const tenant of ['a', 'b']) {
        const results = await engine.run([{ id: '0', name: 'names_0', arguments: '{}' }, { id: '1', name: 'names_1', arguments: '{}' }], { tenant });
        expect(results.map((result) => (result as { value?: unknown }).value)).toEqual([['kv.get'], ['kv.set']]);
      }
    } finally {
      await sandbox.close();
      await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  it('a plugin checked under one manifest and loaded under another (same name, same module) runs under the one it was loaded with', async () => {
    // The sandbox process keeps a plugin's spec by key, sent once: a key of name and module
    // alone let the checked manifest's grants stand in for the loaded one's.
    const folder = async (manifest: object): Promise<string> => {
      const dir = await mkdtemp(join(tmpdir(), 'airlock-same-plugin-'));
      await writeFile(join(dir, 'index.js'), "export default { tools: [{ name: 'realm', description: 'What does the realm hold?', parameters: { type: 'object' }, execute: (_args, ctx) => ({ wasm: typeof WebAssembly, caps: Object.keys(ctx.capabilities) }) }] };");
      await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'same', module: './index.js', ...manifest }));
      return dir;
    };
    const loose = await folder({ grants: { webAssembly: true }, capabilities: ['kv.get'] });
    const tight = await folder({});
    const sandbox = createSandbox({ processes: 1, threads: 1, capabilities });
    try {
      expect((await sandbox.checkPlugins([loose]))[0]!.problems).toEqual([]);
      await sandbox.loadPlugins([tight]);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
      const [result] = await engine.run([{ id: 'r', name: 'realm', arguments: '{}' }]);
      expect((result as { value?: unknown }).value).toEqual({ wasm: 'undefined', caps: [] });
    } finally {
      await sandbox.close();
      await Promise.all([loose, tight].map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  it('capability options are checked by path', () => {
    expect(() => createSandbox({ capabilities: { 'Bad Name': () => null } })).toThrow(/options\.capabilities: "Bad Name" is not a capability name/);
    expect(() => createSandbox({ capabilities: { 'kv.get': 'nope' as never } })).toThrow(/options\.capabilities\.kv\.get must be a function/);
  });
});
