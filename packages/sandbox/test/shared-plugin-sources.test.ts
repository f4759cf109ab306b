import { describe, expect, it } from 'vitest';
import { SharedPluginSources } from '../src/host/shared-plugin-sources.js';
import { PluginSourceCache } from '../src/worker/plugin-source-cache.js';
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

  it('gives a worker back exactly the source, whatever characters it holds', () => {
    // Non-ASCII, an astral character, and a lone surrogate a UTF-8 round trip would replace.
    const text = 'export const s = "héllo — 😀 \uD800 end";';
    const shared = new SharedPluginSources().share(call(spec('odd', text)));
    const restored = new PluginSourceCache().restore(shared.task, shared.source);
    expect(sourceOf(restored)).toBe(text);
  });

  it('keeps decoded sources per plugin key and still serves a plugin it let go of', () => {
    const sources = new SharedPluginSources();
    const cache = new PluginSourceCache();
    const plugins = Array.from({ length: 70 }, (_, i) => spec(`p${i}`, `export const n = ${i};`));
    for (const plugin of plugins) cache.restore(sources.share(call(plugin)).task, sources.share(call(plugin)).source);
    // The first ones were let go of (the cache is bounded); their bytes still decode.
    for (const plugin of [plugins[0], plugins[69]] as PluginSpec[]) {
      const shared = sources.share(call(plugin));
      expect(sourceOf(cache.restore(shared.task, shared.source))).toBe(plugin.source);
    }
  });

  it('passes a ping through untouched', () => {
    const shared = new SharedPluginSources().share({ kind: 'ping' });
    expect(shared).toEqual({ task: { kind: 'ping' } });
    expect(new PluginSourceCache().restore(shared.task, shared.source)).toEqual({ kind: 'ping' });
  });
});
