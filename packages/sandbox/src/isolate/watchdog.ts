// Host-side limits for one isolate task: CPU time (polled from isolate.cpuTime), the wall
// clock, and the heap when either runs out. Each kills the isolate; no cooperation from
// plugin code is needed.
//
// Every task the host starts in the isolate also carries isolated-vm's own `timeout`, set
// to end when the call's CPU allowance or (a little before) its deadline does, whichever
// is first. A task stopped that way leaves the isolate idle, so before the verdict the
// host can read its heap: a heap at its ceiling means garbage collection ate the budget,
// and the answer is MEMORY_LIMIT, not CPU_LIMIT or TIMEOUT.
import type ivm from './ivm.js';
import type { KillReason } from './failure-code.js';

/** How long a verdict waits for the heap figures of an isolate still busy (a task stopped mid garbage collection). */
const HEAP_CHECK_GRACE_MS = 100;
/** The same wait for a CPU verdict: long enough for the task's own timeout (CPU_SLACK_MS later) to stop it. */
const CPU_VERDICT_GRACE_MS = 40;
/** Added to the CPU allowance in a task's timeout (see taskTimeoutMs). */
const CPU_SLACK_MS = 25;
/** A task is stopped this long before the deadline, so the isolate is idle when the verdict is made. */
const TASK_STOP_LEAD_MS = 25;
/** Committed heap at this share of the limit or more: the heap was at its ceiling. */
const HEAP_CEILING_SHARE = 0.8;
/**
 * How long a call may stay pending once isolated-vm disposed its isolate unasked: from
 * Node 24 (isolated-vm 6 and 7) a heap-limit disposal inside a worker thread may leave the
 * call pending for good. The verdict is then MEMORY_LIMIT, not a wall-clock TIMEOUT later.
 */
const DISPOSED_GRACE_MS = 500;

/**
 * This thread's view of the process's resident memory, sampled in the background: reading it
 * costs tens of µs (it reads /proc), too much for every call, and the witness it serves is
 * coarse by nature.
 */
let residentBytes = process.memoryUsage.rss();
setInterval(() => {
  residentBytes = process.memoryUsage.rss();
}, 100).unref();

export interface Budget {
  readonly cpuMs: number;
  readonly timeoutMs: number;
}

export class Watchdog {
  killedFor: KillReason | undefined;
  readonly expired: Promise<never>;
  readonly #isolate: ivm.Isolate;
  readonly #budget: Budget;
  readonly #memoryLimitBytes: number;
  readonly #cpuStart: bigint;
  readonly #rssStart = residentBytes;
  readonly #wallStart = performance.now();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #deadline: ReturnType<typeof setTimeout>;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #judging = false;
  #disposedAt: number | undefined;
  #stopped = false;
  #expire!: (reason: Error) => void;

  constructor(isolate: ivm.Isolate, budget: Budget, memoryMb: number) {
    this.#isolate = isolate;
    this.#budget = budget;
    this.#memoryLimitBytes = memoryMb * 1024 * 1024;
    this.#cpuStart = isolate.cpuTime;
    this.expired = new Promise<never>((_, reject) => {
      this.#expire = reject;
    });
    this.expired.catch(() => undefined); // observed by whoever races it
    const budgetNs = BigInt(Math.round(budget.cpuMs * 1e6));
    this.#poll = setInterval(() => {
      if (isolate.isDisposed) {
        this.#disposedAt ??= performance.now();
        if (performance.now() - this.#disposedAt > DISPOSED_GRACE_MS) this.kill('memory');
        return;
      }
      if (isolate.cpuTime - this.#cpuStart > budgetNs) this.judge('cpu');
    }, Math.min(25, Math.max(2, Math.floor(budget.cpuMs / 4))));
    this.#deadline = setTimeout(() => this.judge('wall'), budget.timeoutMs);
  }

  /**
   * The `timeout` for the next task in the isolate: the wall time left less a lead, or the CPU
   * allowance left plus a little. A task stopped there leaves the isolate idle, so a CPU verdict
   * can read its heap (garbage collection at the ceiling burns CPU too). isolated-vm's timer runs
   * on the wall clock: on a machine so crowded that a task waits for a core longer than that
   * slack, a task can be stopped before using its CPU (documented).
   */
  taskTimeoutMs(): number {
    const wallLeft = this.#budget.timeoutMs - this.#lead() - this.wallMs();
    const cpuLeft = this.#budget.cpuMs - Math.max(0, this.cpuMs());
    return Math.max(1, Math.ceil(Math.min(wallLeft, cpuLeft + CPU_SLACK_MS)));
  }

  /** isolated-vm stopped a task at the timeout this watchdog gave it: the budget it stood for is spent. */
  taskStopped(): void {
    this.judge(this.wallMs() >= this.#budget.timeoutMs - this.#lead() - 1 ? 'wall' : 'cpu');
  }

  /** Decides between `reason` and memory, then kills. Waits briefly for the heap figures, never long. */
  judge(reason: 'cpu' | 'wall'): void {
    if (this.killedFor !== undefined || this.#judging) return;
    // isolated-vm disposes an isolate on its own only at its heap limit.
    if (this.#isolate.isDisposed) return this.kill('memory');
    this.#judging = true;
    let settled = false;
    const decide = (memory: boolean): void => {
      if (settled || this.#stopped) return;
      settled = true;
      if (this.#grace !== undefined) clearTimeout(this.#grace);
      this.kill(memory ? 'memory' : reason);
    };
    // Still busy after the grace. For a CPU verdict that is a spin its own timeout has not
    // stopped yet: CPU. At the deadline it is a builtin that ignores termination: the heap
    // cannot answer, and this process growing by the isolate's whole limit is the witness
    // (never for a CPU verdict: other isolates in the process grow too, and a spin beside a
    // growing neighbour was once called MEMORY_LIMIT).
    this.#grace = setTimeout(
      () => decide(reason === 'wall' && process.memoryUsage.rss() - this.#rssStart >= this.#memoryLimitBytes),
      reason === 'cpu' ? CPU_VERDICT_GRACE_MS : HEAP_CHECK_GRACE_MS,
    );
    this.#isolate.getHeapStatistics().then(
      // Committed heap, not used: stopping the task already collected what it held.
      (heap) => decide(heap.total_heap_size + heap.externally_allocated_size >= HEAP_CEILING_SHARE * this.#memoryLimitBytes),
      () => decide(false),
    );
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
    this.#stopped = true;
    clearInterval(this.#poll);
    clearTimeout(this.#deadline);
    if (this.#grace !== undefined) clearTimeout(this.#grace);
  }

  #lead(): number {
    return Math.min(TASK_STOP_LEAD_MS, this.#budget.timeoutMs / 20);
  }
}
