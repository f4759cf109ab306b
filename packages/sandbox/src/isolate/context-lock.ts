// Creating a realm's context and a worker's one-time borrowing of V8's `gc` (see
// worker/heap-collector.ts) never overlap, in any thread of the process: V8 installs `gc`
// in every context created while its flag is on, and a realm must never have it.
let lock: Int32Array | undefined;

/** The process-wide lock (one Int32 in a SharedArrayBuffer every worker of the pool shares). */
export function shareContextLock(buffer: SharedArrayBuffer): void {
  lock = new Int32Array(buffer);
}

export function withContextLock<T>(work: () => T): T {
  if (lock === undefined) return work();
  while (Atomics.compareExchange(lock, 0, 0, 1) !== 0) Atomics.wait(lock, 0, 1, 1);
  try {
    return work();
  } finally {
    Atomics.store(lock, 0, 0);
    Atomics.notify(lock, 0, 1);
  }
}
