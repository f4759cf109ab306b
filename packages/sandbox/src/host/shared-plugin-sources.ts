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

/** The source's UTF-8 bytes in shared memory; null when UTF-8 cannot carry it exactly (a lone surrogate). */
function sharedBytes(source: string): SharedArrayBuffer | null {
  const utf8 = Buffer.from(source, 'utf8');
  if (utf8.toString('utf8') !== source) return null;
  const bytes = new SharedArrayBuffer(utf8.length);
  utf8.copy(Buffer.from(bytes));
  return bytes;
}

export class SharedPluginSources {
  /** By spec object: a plugin's spec lives as long as the plugin is loaded, and so do its bytes. */
  readonly #bytes = new WeakMap<PluginSpec, SharedArrayBuffer | null>();

  /**
   * The spec with its source held only as shared bytes (its string left to the collector):
   * for a process that keeps specs only to run them, such as a sandbox child.
   */
  hold(spec: PluginSpec): PluginSpec {
    const source = sharedBytes(spec.source);
    if (source === null) return spec;
    const held: PluginSpec = { ...spec, source: '' };
    this.#bytes.set(held, source);
    return held;
  }

  share(task: SandboxTask): SharedSourceTask {
    if (task.kind === 'ping') return { task };
    const spec = task.plugin;
    let source = this.#bytes.get(spec);
    if (source === undefined) {
      source = sharedBytes(spec.source);
      this.#bytes.set(spec, source);
    }
    // A source UTF-8 cannot hold (no module file read from disk is one) travels as before.
    if (source === null) return { task };
    return { task: { ...task, plugin: { ...spec, source: '' } }, source };
  }
}
