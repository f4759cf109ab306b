// A pool worker's side of host/shared-plugin-sources.ts: a task's plugin gets its source back
// as a getter, decoded from the shared bytes only when a realm is built (a call into a warm
// realm never reads it), and kept for the plugins used most recently, within a budget.
import type { PluginSpec, SandboxTask } from './worker-protocol.js';

/** Characters of decoded source a worker keeps (one byte each for ASCII): beyond, the least recently used go. */
export const KEPT_CHARS = 32 * 1024 * 1024;

export class PluginSourceCache {
  readonly #sources = new Map<string, string>();
  #chars = 0;

  /** Characters of decoded source kept now. */
  get keptChars(): number {
    return this.#chars;
  }

  /** The task with its plugin's source put back (read lazily), when it came as shared bytes. */
  restore(task: SandboxTask, shared: SharedArrayBuffer | undefined): SandboxTask {
    if (task.kind === 'ping' || shared === undefined) return task;
    const decode = (): string => this.#decoded(task.plugin.key, shared);
    const plugin: PluginSpec = Object.defineProperty({ ...task.plugin }, 'source', { get: decode, enumerable: true });
    return { ...task, plugin };
  }

  #decoded(key: string, shared: SharedArrayBuffer): string {
    const kept = this.#sources.get(key);
    if (kept !== undefined) {
      // Most recently used last.
      this.#sources.delete(key);
      this.#sources.set(key, kept);
      return kept;
    }
    const source = Buffer.from(shared).toString('utf8');
    if (source.length > KEPT_CHARS) return source;
    for (const [oldest, text] of this.#sources) {
      if (this.#chars + source.length <= KEPT_CHARS) break;
      this.#sources.delete(oldest);
      this.#chars -= text.length;
    }
    this.#sources.set(key, source);
    this.#chars += source.length;
    return source;
  }
}
