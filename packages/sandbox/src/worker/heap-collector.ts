// A pool worker's collection of its own heap, when this process's memory grew a lot since
// the last one. What crosses from an isolate (a rejection's message and stack, a refused
// capability request, a result) can arrive as external strings, whose memory V8 does not
// count toward the worker's heap: without a collection now and then, a plugin leaving huge
// rejected errors behind grew the process by tens of MiB per cheap call until its memory
// ceiling killed it, and every call in it. V8's `gc` is borrowed once per worker, inside the
// context lock, so no realm created meanwhile gets it.
import v8 from 'node:v8';
import vm from 'node:vm';
import { withContextLock } from '../isolate/context-lock.js';
import { sampledResidentBytes } from '../isolate/watchdog.js';

/** Process growth since the last collection that triggers the next. */
const GROWTH_BEFORE_COLLECT_BYTES = 128 * 1024 * 1024;

export class HeapCollector {
  readonly #gc: () => void;
  #baseline = process.memoryUsage.rss();

  private constructor(gc: () => void) {
    this.#gc = gc;
  }

  /** This thread's collector, or undefined if V8 would not lend one. */
  static borrow(): HeapCollector | undefined {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === 'function') return new HeapCollector(own as () => void); // the process runs with --expose-gc
    const gc = withContextLock(() => {
      v8.setFlagsFromString('--expose-gc');
      try {
        return vm.runInNewContext('gc') as unknown;
      } finally {
        v8.setFlagsFromString('--no-expose-gc');
      }
    });
    return typeof gc === 'function' ? new HeapCollector(gc as () => void) : undefined;
  }

  /** After a task: collects if the process grew by GROWTH_BEFORE_COLLECT_BYTES since the last time. */
  afterTask(): void {
    if (sampledResidentBytes() - this.#baseline < GROWTH_BEFORE_COLLECT_BYTES) return;
    this.#gc();
    this.#baseline = process.memoryUsage.rss();
  }
}
