// Host-side limits for one isolate call: CPU time (polled from isolate.cpuTime) and
// the wall clock. Either kills the isolate; no cooperation from plugin code is needed.
import type ivm from './ivm.js';
import type { KillReason } from './failure-code.js';

export class Watchdog {
  killedFor: KillReason | undefined;
  readonly expired: Promise<never>;
  readonly #isolate: ivm.Isolate;
  readonly #cpuStart: bigint;
  readonly #wallStart = performance.now();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #deadline: ReturnType<typeof setTimeout>;
  #expire!: (reason: Error) => void;

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
        // isolated-vm disposed it on its own, at the heap limit; from Node 24 the pending
        // call may then never settle, so settle the race here (failureCode: MEMORY_LIMIT).
        if (this.killedFor === undefined) this.#expire(new Error('isolate disposed'));
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
