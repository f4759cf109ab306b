// Creating a realm's context and a worker's one-time borrowing of V8's `gc` (see
// worker/heap-collector.ts) never overlap, in any thread of the process: V8 installs `gc`
// in every context created while its flag is on, and a realm must never have it.
//
// A worker terminated inside the lock (the backstop terminates a stuck one) never releases it, so a
// lock held past STALE_MS is taken over: creating a context takes milliseconds, and the
// borrowing it guards happens once, when a worker starts.
import { threadId } from 'node:worker_threads';

const STALE_MS = 1000;
/** An Int32 (free 0, else the holder: its thread id + 1), then the time it was taken (BigInt64, ms). */
export const CONTEXT_LOCK_BYTES = 16;

let held: Int32Array | undefined;
let takenAt: BigInt64Array | undefined;
/** What this thread writes into the lock while it holds it: never 0 (free). */
const HOLDER = threadId + 1;

/** The process-wide lock: a SharedArrayBuffer of CONTEXT_LOCK_BYTES every worker of the pool shares. */
export function shareContextLock(buffer: SharedArrayBuffer): void {
  held = new Int32Array(buffer, 0, 1);
  takenAt = new BigInt64Array(buffer, 8, 1);
}

export function withContextLock<T>(work: () => T): T {
  if (held === undefined || takenAt === undefined) return work();
  for (;;) {
    const holder = Atomics.compareExchange(held, 0, 0, HOLDER);
    if (holder === 0) break;
    // Taken over from that very holder only, so two waiters never both get in.
    if (Date.now() - Number(Atomics.load(takenAt, 0)) > STALE_MS && Atomics.compareExchange(held, 0, holder, HOLDER) === holder) break;
    Atomics.wait(held, 0, holder, 1);
  }
  Atomics.store(takenAt, 0, BigInt(Date.now()));
  try {
    return work();
  } finally {
    // Released only if still ours (not taken over while this thread was stalled past STALE_MS).
    Atomics.compareExchange(held, 0, HOLDER, 0);
    Atomics.notify(held, 0, 1);
  }
}
