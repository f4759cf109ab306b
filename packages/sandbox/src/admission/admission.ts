// Admission in front of the sandbox. Where a call runs (its placement: a tenant's shard by
// stable hash, or the probation process for a crash suspect) is checked again when it is
// admitted, and the call is then run exactly there; when it may start is fair-share.ts's decision.
import { FairShare, type FairShareOptions } from './fair-share.js';

export interface AdmissionOptions extends FairShareOptions {
  /** Where this tenant+plugin's calls run now: an index into `placements`. */
  readonly placementOf: (tenant: string, plugin: string) => number;
}

export interface Grant {
  /** Frees the thread; call once the task is answered. */
  readonly release: () => void;
  /** The process to run the task in. */
  readonly placement: number;
}

export class Admission {
  readonly #share: FairShare;
  readonly #placementOf: AdmissionOptions['placementOf'];

  constructor(options: AdmissionOptions) {
    this.#share = new FairShare(options);
    this.#placementOf = options.placementOf;
  }

  /**
   * Resolves once the task may start where its pair belongs now; rejects with
   * ABORTED_BEFORE_DISPATCH if cancelled first. The caller must run the task at the grant's
   * placement before it next yields to the event loop (crashes are recorded only from there).
   */
  async acquire(tenant: string, plugin: string, signal: AbortSignal): Promise<Grant> {
    for (;;) {
      const placement = this.#placementOf(tenant, plugin);
      const release = await this.#share.acquire(tenant, placement, signal);
      // A crash while it queued may have made its pair a suspect: it must then not start in
      // a shared shard (an aborter would take its neighbours down again), so it queues anew
      // for probation. Rarely taken: only when a crash changed the pair's placement.
      if (this.#placementOf(tenant, plugin) === placement) return { release, placement };
      release();
    }
  }
}
