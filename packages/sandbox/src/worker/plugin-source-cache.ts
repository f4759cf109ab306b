// A pool worker's copies of plugin sources, decoded once from the bytes the host shares
// (host/shared-plugin-sources.ts) instead of arriving as a string with every task.
import type { SandboxTask } from './worker-protocol.js';

/** Plugins a worker keeps the source of; the least recently used goes first beyond this. */
const KEPT_SOURCES = 64;

export class PluginSourceCache {
  readonly #sources = new Map<string, string>();

  /** The task with its plugin's source put back: from this cache, or decoded from the shared bytes. */
  restore(task: SandboxTask, shared: SharedArrayBuffer | undefined): SandboxTask {
    if (task.kind === 'ping' || shared === undefined) return task;
    const key = task.plugin.key;
    let source = this.#sources.get(key);
    if (source === undefined) {
      source = Buffer.from(shared).toString('utf16le');
      if (this.#sources.size >= KEPT_SOURCES) this.#sources.delete(this.#sources.keys().next().value as string);
    } else this.#sources.delete(key);
    this.#sources.set(key, source);
    return { ...task, plugin: { ...task.plugin, source } };
  }
}
