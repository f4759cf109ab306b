// A plugin's module source crosses to the pool's workers as a SharedArrayBuffer, not as a
// string inside every task: structured clone copies a string each time (a 280 KB bundle
// added about 170 µs to every warm call, in-process), a SharedArrayBuffer is passed by
// reference at any size. Workers decode it once and keep it (worker/plugin-source-cache.ts).
import type { PluginSpec, SandboxTask } from '../worker/worker-protocol.js';

/** A task ready for a pool worker: its plugin's source emptied, and the shared bytes that hold it. */
export interface SharedSourceTask {
  readonly task: SandboxTask;
  readonly source?: SharedArrayBuffer;
}

export class SharedPluginSources {
  /** By spec object: a plugin's spec lives as long as the plugin is loaded, and so do its bytes. */
  readonly #bytes = new WeakMap<PluginSpec, SharedArrayBuffer>();

  share(task: SandboxTask): SharedSourceTask {
    if (task.kind === 'ping') return { task };
    const spec = task.plugin;
    let source = this.#bytes.get(spec);
    if (source === undefined) {
      // UTF-16 code units, as the string holds them: lossless for any string, lone surrogates too.
      const units = Buffer.from(spec.source, 'utf16le');
      source = new SharedArrayBuffer(units.length);
      units.copy(Buffer.from(source));
      this.#bytes.set(spec, source);
    }
    return { task: { ...task, plugin: { ...spec, source: '' } }, source };
  }
}
