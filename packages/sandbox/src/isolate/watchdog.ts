// Host-side limits for one isolate call: CPU time (polled from isolate.cpuTime) and
// the wall clock. Either kills the isolate; no cooperation from plugin code is needed.
import type ivm from './ivm.js';
import type { KillReason } from './failure-code.js';

/** How long a call may stay pending once isolated-vm disposed its isolate unasked. */
const DISPOSED_GRACE_MS = 500;

export class Watchdog {
  killedFor: KillReason | undefined;
  readonly expired: Promise<never>;
  readonly #isolate: ivm.Isolate;
  readonly #cpuStart: bigint;
  readonly #wallStart = performance.now();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #deadline: ReturnType<typeof setTimeout>;
  #expire!: (reason: Error) => void;
  #disposedAt: number | undefined;

  constructor(isolate: ivm.Isolate, cpuMs: number, timeoutMs: number) {
    this.#isolate = isolate;
    this.#cpuStart = isolate.cpuTime;
    this.expired = new Promise<never>((_, reject) => {
      this.#expire = reject;
    });
    this.expired.catch(() => undefined); // observed by whoever races it
    const budgetNs = BigInt(Math.round(cpuMs * 1e6));
    this.#poll = setInterval(() => {
      if (isolate.isDisposed) {
        // isolated-vm disposed it on its own (its heap limit, or its own CPU timeout); its
        // rejection normally follows at once and says which. From Node 24 a heap-limit
        // disposal may leave the call pending for good: settle it after a grace period
        // (failureCode: MEMORY_LIMIT) instead of at the wall-clock deadline.
        this.#disposedAt ??= performance.now();
        if (this.killedFor === undefined && performance.now() - this.#disposedAt > DISPOSED_GRACE_MS) this.#expire(new Error('isolate disposed'));
        return;
      }
      if (isolate.cpuTime - this.#cpuStart > budgetNs) this.kill('cpu');
    }, Math.min(25, Math.max(2, Math.floor(cpuMs / 4))));
    this.#deadline = setTimeout(() => this.kill('wall'), timeoutMs);
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
  }
}
