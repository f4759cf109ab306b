// Where sandbox tasks run: a Piscina pool in a supervised child process (the default),
// or in this process for embedders who accept that an isolate OOM may abort it.
import type { CapabilityHandler, SandboxOutcome, SandboxTask } from '../worker/worker-protocol.js';

export interface SandboxHost {
  /**
   * Always resolves with an outcome: crashes, cancellations and shutdowns included.
   * `capabilities` answers the call's capability requests (plugins granted some only).
   * `placement` is the process admission chose for it; hosts with one pool ignore it.
   */
  run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler, placement?: number): Promise<SandboxOutcome>;
  /** Process ids hosting isolates (for supervision, diagnostics and fault-injection tests). */
  processIds(): number[];
  close(): Promise<void>;
}

export interface PoolOptions {
  /** Worker threads per pool. Default: the machine's available parallelism, at least 2. */
  readonly threads?: number;
}
