import { describe, expect, it } from 'vitest';
import { SharedPluginSources } from '../src/host/shared-plugin-sources.js';
import { KEPT_CHARS, PluginSourceCache } from '../src/worker/plugin-source-cache.js';
import type { PluginSpec, SandboxTask } from '../src/worker/worker-protocol.js';

const spec = (name: string, source: string): PluginSpec => ({
  key: `${name}@0123456789abcdef`,
  name,
  source,
  limits: { memoryMb: 64, cpuMs: 1000, timeoutMs: 5000, maxOutputBytes: 1 << 20 },
  realm: 'warm',
  grants: { webAssembly: false, sharedArrayBuffer: false },
  capabilities: [],
});
const call = (plugin: PluginSpec): SandboxTask => ({ kind: 'call', plugin, tenant: 't', tool: 'echo', callId: 'c1', argsJson: '{}' });
const sourceOf = (task: SandboxTask): string => (task.kind === 'ping' ? '' : task.plugin.source);

describe('plugin sources shared with pool workers', () => {
  it('sends a task without its source string, the source once per plugin in shared bytes', () => {
    const sources = new SharedPluginSources();
    const plugin = spec('big', `export default ${JSON.stringify('x'.repeat(300_000))};`);
    const first = sources.share(call(plugin));
    const second = sources.share(call(plugin));
    expect(sourceOf(first.task)).toBe(''); // nothing per call scales with the plugin's size
    expect(first.source).toBeInstanceOf(SharedArrayBuffer);
    expect(second.source).toBe(first.source);
    expect(plugin.source.length).toBeGreaterThan(300_000); // the loaded plugin keeps its own
  });

  it('gives a worker back exactly the source, and one UTF-8 cannot hold travels as it always did', () => {
    const text = 'export const s = "héllo — 😀 end";';
    const shared = new SharedPluginSources().share(call(spec('odd', text)));
    expect(shared.source).toBeInstanceOf(SharedArrayBuffer);
    expect(sourceOf(new PluginSourceCache().restore(shared.task, shared.source))).toBe(text);
    // A lone surrogate (never in a module read from a file) would not survive UTF-8.
    const lone = `export const s = "${String.fromCharCode(0xd800)}";`;
    const unshared = new SharedPluginSources().share(call(spec('lone', lone)));
    expect(unshared.source).toBeUndefined();
    expect(sourceOf(new PluginSourceCache().restore(unshared.task, unshared.source))).toBe(lone);
  });

  it('decodes a source only when it is read, and keeps decoded sources within a budget', () => {
    const sources = new SharedPluginSources();
    const cache = new PluginSourceCache();
    // 40 plugins of 1 MiB: more than a worker keeps (32 Mi characters), each still served exactly.
    const plugins = Array.from({ length: 40 }, (_, i) => spec(`p${i}`, `export const n = ${i}; // ${'x'.repeat(1 << 20)}`));
    for (const round of [0, 1]) {
      for (const plugin of plugins) {
        const shared = sources.share(call(plugin));
        expect(sourceOf(cache.restore(shared.task, shared.source)), `round ${round}`).toBe(plugin.source);
        expect(cache.keptChars).toBeLessThanOrEqual(KEPT_CHARS);
      }
    }
    expect(cache.keptChars).toBeGreaterThan(KEPT_CHARS / 2);
    // A warm call never reads it: restoring costs nothing that scales with the source.
    const big = sources.share(call(plugins[0] as PluginSpec));
    const restored = cache.restore(big.task, big.source);
    expect(restored.kind === 'ping' ? undefined : Object.getOwnPropertyDescriptor(restored.plugin, 'source')?.get).toBeTypeOf('function');
  });

  it('can hold a spec by its bytes alone, as a sandbox process does, and still serve its source', () => {
    const sources = new SharedPluginSources();
    const plugin = spec('held', 'export const held = "é";');
    const held = sources.hold(plugin);
    expect(held.source).toBe('');
    const shared = sources.share(call(held));
    expect(sourceOf(new PluginSourceCache().restore(shared.task, shared.source))).toBe(plugin.source);
  });

  it('passes a ping through untouched', () => {
    const shared = new SharedPluginSources().share({ kind: 'ping' });
    expect(shared).toEqual({ task: { kind: 'ping' } });
    expect(new PluginSourceCache().restore(shared.task, shared.source)).toEqual({ kind: 'ping' });
  });
});
