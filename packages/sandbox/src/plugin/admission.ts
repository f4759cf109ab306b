// Admission in front of the sandbox: one fair-share lane per sandbox process, so each
// lane's capacity is the threads of the process its calls will really run in. Where a call
// runs (its placement: a tenant's shard by stable hash, or the probation process for a crash
// suspect) is decided once, here, and the call is then run exactly there.
import { FairShareLane, type FairShareOptions } from './fair-share.js';

export interface AdmissionOptions {
  /** One entry per placement (sandbox process): its thread counts. */
  readonly lanes: readonly Pick<FairShareOptions, 'threads' | 'reserveThreads'>[];
  readonly weightOf: FairShareOptions['weightOf'];
  /** Where this tenant+plugin's calls run now: an index into `lanes`. */
  readonly placementOf: (tenant: string, plugin: string) => number;
}

export interface Grant {
  /** Frees the thread; call once the task is answered. */
  readonly release: () => void;
  /** The process to run the task in. */
  readonly placement: number;
}

export class Admission {
  readonly #lanes: FairShareLane[];
  readonly #placementOf: AdmissionOptions['placementOf'];

  constructor(options: AdmissionOptions) {
    this.#lanes = options.lanes.map((lane) => new FairShareLane({ ...lane, weightOf: options.weightOf }));
    this.#placementOf = options.placementOf;
  }

  /** Resolves once the task may start; rejects with ABORTED_BEFORE_DISPATCH if cancelled first. */
  async acquire(tenant: string, plugin: string, signal: AbortSignal): Promise<Grant> {
    const placement = this.#placementOf(tenant, plugin);
    const release = await (this.#lanes[placement] as FairShareLane).acquire(tenant, signal);
    return { release, placement };
  }
}
