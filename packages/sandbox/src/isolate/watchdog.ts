// Host-side limits for one isolate task: CPU time (polled from isolate.cpuTime), the wall
// clock, and the heap at the deadline. Each kills the isolate; no cooperation from plugin
// code is needed.
import type ivm from 'isolated-vm';
import type { KillReason } from './failure-code.js';

/**
 * How long the wall-clock verdict waits for the isolate's heap figures before it gives up on
 * them. A spinning task stops at once; only one caught in garbage collection takes longer.
 */
const HEAP_CHECK_GRACE_MS = 100;
/**
 * isolated-vm stops a running task this long before the deadline, so that at the deadline
 * the isolate is idle and can answer for its heap (stopping a task in the middle of a
 * garbage collection takes a while).
 */
const TASK_STOP_LEAD_MS = 25;
/** A heap this full at the deadline means the time went to garbage collection at the ceiling. */
const HEAP_CEILING_SHARE = 0.8;

export class Watchdog {
  killedFor: KillReason | undefined;
  readonly expired: Promise<never>;
  readonly #isolate: ivm.Isolate;
  readonly #memoryLimitBytes: number;
  readonly #cpuStart: bigint;
  readonly #rssStart = process.memoryUsage.rss();
  readonly #wallStart = performance.now();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #deadline: ReturnType<typeof setTimeout>;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #expire!: (reason: Error) => void;

  constructor(isolate: ivm.Isolate, budget: { readonly cpuMs: number; readonly timeoutMs: number }, memoryMb: number) {
    this.#isolate = isolate;
    this.#memoryLimitBytes = memoryMb * 1024 * 1024;
    this.#cpuStart = isolate.cpuTime;
    this.expired = new Promise<never>((_, reject) => {
      this.#expire = reject;
    });
    this.expired.catch(() => undefined); // observed by whoever races it
    const budgetNs = BigInt(Math.round(budget.cpuMs * 1e6));
    this.#poll = setInterval(() => {
      if (isolate.isDisposed) return;
      // Garbage collection at the heap's ceiling burns CPU too: then memory is the true verdict.
      if (isolate.cpuTime - this.#cpuStart > budgetNs) this.kill(this.#processGrewToCeiling() ? 'memory' : 'cpu');
    }, Math.min(25, Math.max(2, Math.floor(budget.cpuMs / 4))));
    this.#deadline = setTimeout(() => this.#atDeadline(), budget.timeoutMs);
  }

  /** The timeout isolated-vm puts on each task: it stops a runaway task just before the deadline. */
  taskTimeoutMs(timeoutMs: number): number {
    const lead = Math.min(TASK_STOP_LEAD_MS, timeoutMs / 20);
    return Math.max(1, Math.ceil(timeoutMs - lead - this.wallMs()));
  }

  /**
   * At the deadline, a task that was allocating has been stopped by its own timeout and the
   * isolate is idle, so its heap figures arrive at once; one still busy gets a short grace.
   * A heap at its ceiling means memory, not slowness, ended the call.
   */
  #atDeadline(): void {
    if (this.killedFor !== undefined) return;
    // isolated-vm disposes an isolate on its own only at its heap limit.
    if (this.#isolate.isDisposed) return this.kill('memory');
    let settled = false;
    const decide = (reason: KillReason): void => {
      if (settled) return;
      settled = true;
      if (this.#grace !== undefined) clearTimeout(this.#grace);
      this.kill(reason);
    };
    // Still busy: a builtin that ignores termination. The process's own growth is then the best witness.
    this.#grace = setTimeout(() => decide(this.#processGrewToCeiling() ? 'memory' : 'wall'), HEAP_CHECK_GRACE_MS);
    this.#isolate.getHeapStatistics().then(
      // Committed heap, not used: stopping the task already collected what it held.
      (heap) => decide(heap.total_heap_size + heap.externally_allocated_size >= HEAP_CEILING_SHARE * this.#memoryLimitBytes || this.#processGrewToCeiling() ? 'memory' : 'wall'),
      () => decide('wall'),
    );
  }

  /** Resident memory this process gained during the task: another witness when the heap cannot answer. */
  #processGrewToCeiling(): boolean {
    return process.memoryUsage.rss() - this.#rssStart >= HEAP_CEILING_SHARE * this.#memoryLimitBytes;
  }

  kill(reason: KillReason): void {
    if (this.killedFor !== undefined) return;
    this.killedFor = reason;
    if (!this.#isolate.isDisposed) {
      try {
        this.#isolate.dispose();
      } catch {
        // already disposing
      }
    }
    // Backstop: settles the race even if isolated-vm never settles the call.
    this.#expire(new Error(`isolate killed: ${reason}`));
  }

  cpuMs(): number {
    if (this.#isolate.isDisposed) return -1;
    try {
      return Number(this.#isolate.cpuTime - this.#cpuStart) / 1e6;
    } catch {
      return -1;
    }
  }

  wallMs(): number {
    return performance.now() - this.#wallStart;
  }

  stop(): void {
    clearInterval(this.#poll);
    clearTimeout(this.#deadline);
    if (this.#grace !== undefined) clearTimeout(this.#grace);
  }
}
