// Host-side limits for one isolate task: CPU time (polled from isolate.cpuTime), the wall
// clock, and the heap when either runs out. Each kills the isolate; no cooperation from
// plugin code is needed.
//
// Every task the host starts in the isolate also carries isolated-vm's own `timeout`, set
// to end a margin after the call's CPU allowance or a little before its deadline, whichever
// is first. A task stopped that way leaves the isolate idle, so before the verdict the
// host can read its heap: a heap at its ceiling means garbage collection ate the budget,
// and the answer is MEMORY_LIMIT, not CPU_LIMIT or TIMEOUT.
import type ivm from './ivm.js';
import type { KillReason } from './failure-code.js';

/** How long a verdict waits for the heap figures of an isolate still busy (a task stopped mid garbage collection). */
const HEAP_CHECK_GRACE_MS = 100;
/** The same wait for a CPU verdict: long enough for the task's own timeout (cpuSlackMs later) to stop it. */
const CPU_VERDICT_GRACE_MS = 40;
/**
 * Added to the CPU allowance in a task's timeout (see taskTimeoutMs): a fifth of the call's
 * allowance, within these bounds. A CPU kill is stopped this late, so a short allowance gets
 * a short one (50 ms: 10), a long one no more than 25. It is also all the slack a task has
 * for waiting on a core: while a task runs, isolated-vm's cpuTime counts the clock, not the
 * thread's CPU (src/isolate/executor.cc, CpuTimer::Delta), and its timeout is wall time.
 */
const CPU_SLACK_SHARE = 0.2;
const MIN_CPU_SLACK_MS = 10;
const MAX_CPU_SLACK_MS = 25;
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

/** This process's resident memory as last sampled (every 100 ms). */
export function sampledResidentBytes(): number {
  return residentBytes;
}

/**
 * How often this thread's watchdogs look at their budgets. One sweep serves every watchdog
 * in force (a worker runs one task at a time, a pool worker's classify beside it at most):
 * a timer pair per call cost more than the rest of a warm call's bookkeeping together.
 * A deadline or a CPU allowance is noticed at most this late; isolated-vm's own timeout
 * (taskTimeoutMs) stops a spinning task on time regardless.
 */
const SWEEP_MS = 5;
/** Sweeps with nothing to watch before the sweep stops: a worker that keeps calling never re-arms it. */
const IDLE_SWEEPS_BEFORE_STOP = 20;
const inForce = new Set<Watchdog>();
let sweep: ReturnType<typeof setInterval> | undefined;
let idleSweeps = 0;

function watch(watchdog: Watchdog): void {
  inForce.add(watchdog);
  idleSweeps = 0;
  sweep ??= setInterval(sweepAll, SWEEP_MS).unref();
}

function sweepAll(): void {
  if (inForce.size === 0) {
    idleSweeps += 1;
    if (idleSweeps >= IDLE_SWEEPS_BEFORE_STOP) {
      clearInterval(sweep);
      sweep = undefined;
    }
    return;
  }
  idleSweeps = 0;
  for (const watchdog of inForce) {
    try {
      watchdog.check();
    } catch {
      // An isolate disposed between two reads: the next sweep sees it gone. A throw here
      // would end the worker thread, and every task on it.
    }
  }
}

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
  readonly #cpuBudgetNs: bigint;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #judging = false;
  #disposedAt: number | undefined;
  #stopped = false;
  /** CPU used as last read, in ns: what a call killed here reports (a disposed isolate has no clock). */
  #lastCpuNs = 0n;
  #expire!: (reason: Error) => void;

  readonly #cancelled: () => boolean;

  /** `cancelled` says whether the task's caller cancelled it: looked at on every sweep, it stops the isolate (ABORTED). */
  constructor(isolate: ivm.Isolate, budget: Budget, memoryMb: number, cancelled: () => boolean = () => false) {
    this.#isolate = isolate;
    this.#budget = budget;
    this.#cancelled = cancelled;
    this.#memoryLimitBytes = memoryMb * 1024 * 1024;
    this.#cpuStart = isolate.cpuTime;
    this.expired = new Promise<never>((_, reject) => {
      this.#expire = reject;
    });
    this.expired.catch(() => undefined); // observed by whoever races it
    this.#cpuBudgetNs = BigInt(Math.round(budget.cpuMs * 1e6));
    watch(this);
  }

  /** One look at the budget, from this thread's sweep: the deadline, an isolate gone, the CPU used. */
  check(): void {
    if (this.#cancelled()) return this.kill('cancel');
    if (this.wallMs() >= this.#budget.timeoutMs) return this.judge('wall');
    if (this.#isolate.isDisposed) {
      this.#disposedAt ??= performance.now();
      if (performance.now() - this.#disposedAt > DISPOSED_GRACE_MS) this.kill('memory');
      return;
    }
    this.#lastCpuNs = this.#isolate.cpuTime - this.#cpuStart;
    if (this.#lastCpuNs > this.#cpuBudgetNs) this.judge('cpu');
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
    return Math.max(1, Math.ceil(Math.min(wallLeft, cpuLeft + this.#cpuSlackMs())));
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
        this.#lastCpuNs = this.#isolate.cpuTime - this.#cpuStart;
        this.#isolate.dispose();
      } catch {
        // already disposing
      }
    }
    // Backstop: settles the race even if isolated-vm never settles the call.
    this.#expire(new Error(`isolate killed: ${reason}`));
  }

  /** CPU the task used, in ms; once the isolate is gone, as last read (on every sweep and at the kill). */
  cpuMs(): number {
    if (!this.#isolate.isDisposed) {
      try {
        this.#lastCpuNs = this.#isolate.cpuTime - this.#cpuStart;
      } catch {
        // disposed meanwhile: the last reading stands
      }
    }
    return Number(this.#lastCpuNs) / 1e6;
  }

  wallMs(): number {
    return performance.now() - this.#wallStart;
  }

  stop(): void {
    this.#stopped = true;
    inForce.delete(this);
    if (this.#grace !== undefined) clearTimeout(this.#grace);
  }

  #cpuSlackMs(): number {
    return Math.min(MAX_CPU_SLACK_MS, Math.max(MIN_CPU_SLACK_MS, CPU_SLACK_SHARE * this.#budget.cpuMs));
  }

  #lead(): number {
    return Math.min(TASK_STOP_LEAD_MS, this.#budget.timeoutMs / 20);
  }
}
