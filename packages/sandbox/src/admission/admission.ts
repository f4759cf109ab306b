// Admission in front of the sandbox. Where a call runs (its placement: a tenant's shard by
// stable hash, or the probation process for a crash suspect) is decided when it is admitted,
// and the call is then run exactly there; when it may start is fair-share.ts's decision.
import { FairShare, type Admitted, type FairShareOptions } from './fair-share.js';

export interface AdmissionOptions extends FairShareOptions {
  /** Where this tenant+plugin's calls run now: an index into `placements`. */
  readonly placementOf: (tenant: string, plugin: string) => number;
}

/** `release` frees the thread (call once the task is answered); `placement` is the process to run the task in. */
export type Grant = Admitted;

export class Admission {
  readonly #share: FairShare;
  readonly #placementOf: AdmissionOptions['placementOf'];

  constructor(options: AdmissionOptions) {
    this.#share = new FairShare(options);
    this.#placementOf = options.placementOf;
  }

  /**
   * Resolves once the task may start where its pair belongs at that moment; rejects with
   * ABORTED_BEFORE_DISPATCH if cancelled first. A crash while the call queued may have made
   * its pair a suspect (or cleared it): placed when it queued, an aborter's call would take
   * its shard's calls down again. The caller must run the task at the grant's placement
   * before it next yields to the event loop (crashes are recorded only from there).
   */
  acquire(tenant: string, plugin: string, signal: AbortSignal): Promise<Grant> {
    return this.#share.acquire(tenant, () => this.#placementOf(tenant, plugin), signal);
  }
}
