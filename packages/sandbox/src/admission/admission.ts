// Admission in front of the sandbox. Where a call runs (its placement: a tenant's shard by
// stable hash, or the probation process for a crash suspect) is decided once, here, and
// the call is then run exactly there; when it may start is fair-share.ts's decision.
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

  /** Resolves once the task may start; rejects with ABORTED_BEFORE_DISPATCH if cancelled first. */
  async acquire(tenant: string, plugin: string, signal: AbortSignal): Promise<Grant> {
    const placement = this.#placementOf(tenant, plugin);
    const release = await this.#share.acquire(tenant, placement, signal);
    return { release, placement };
  }
}
