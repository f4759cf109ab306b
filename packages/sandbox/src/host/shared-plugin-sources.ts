// A plugin's module source crosses to the pool's workers as a SharedArrayBuffer, not as a
// string inside every task: structured clone copies a string each time (a 280 KB bundle
// added about 170 µs to every warm call, in-process), a SharedArrayBuffer is passed by
// reference at any size. Workers decode it only to build a realm (worker/plugin-source-cache.ts).
import type { PluginSpec, SandboxTask } from '../worker/worker-protocol.js';

/** A task ready for a pool worker: its plugin's source emptied, and the shared bytes that hold it. */
export interface SharedSourceTask {
  readonly task: SandboxTask;
  readonly source?: SharedArrayBuffer;
}

/** What a task carries for one plugin: its spec with the source emptied, and the bytes that hold it. */
interface Shared {
  readonly spec: PluginSpec;
  readonly bytes: SharedArrayBuffer;
}

/** The spec as tasks carry it, or null when UTF-8 cannot carry its source exactly (a lone surrogate). */
function shareable(spec: PluginSpec): Shared | null {
  const utf8 = Buffer.from(spec.source, 'utf8');
  if (utf8.toString('utf8') !== spec.source) return null;
  const bytes = new SharedArrayBuffer(utf8.length);
  utf8.copy(Buffer.from(bytes));
  return { spec: { ...spec, source: '' }, bytes };
}

export class SharedPluginSources {
  /** By spec object: a plugin's spec lives as long as the plugin is loaded, and so does this. */
  readonly #shared = new WeakMap<PluginSpec, Shared | null>();

  /**
   * The spec with its source held only as shared bytes (its string left to the collector):
   * for a process that keeps specs only to run them, such as a sandbox child.
   */
  hold(spec: PluginSpec): PluginSpec {
    const shared = shareable(spec);
    if (shared === null) return spec;
    this.#shared.set(shared.spec, shared);
    return shared.spec;
  }

  share(task: SandboxTask): SharedSourceTask {
    if (task.kind === 'ping') return { task };
    let shared = this.#shared.get(task.plugin);
    if (shared === undefined) {
      shared = shareable(task.plugin);
      this.#shared.set(task.plugin, shared);
    }
    // A source UTF-8 cannot hold (no module file read from disk is one) travels as before.
    if (shared === null) return { task };
    // The emptied spec is made once per plugin: a call copies only the task's own fields.
    return { task: { ...task, plugin: shared.spec }, source: shared.bytes };
  }
}
