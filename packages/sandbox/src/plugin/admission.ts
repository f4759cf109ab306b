// Admission in front of the sandbox: one fair-share lane per sandbox process, the tenant's
// lane chosen by the same stable hash that places its calls, so each lane's capacity is the
// threads of the process its calls will really run in.
import { shardOf } from '../host/shard-placement.js';
import { FairShareLane, type FairShareOptions } from './fair-share.js';

export interface AdmissionOptions extends FairShareOptions {
  /** Sandbox processes (lanes); 1 in in-process mode. */
  readonly lanes: number;
  /** A crash suspect's calls run alone in their lane, so a repeat crash can be pinned on it. */
  readonly runsAlone?: (tenant: string, plugin: string) => boolean;
}

export class Admission {
  readonly #lanes: FairShareLane[];
  readonly #runsAlone: AdmissionOptions['runsAlone'];

  constructor(options: AdmissionOptions) {
    this.#lanes = Array.from({ length: options.lanes }, () => new FairShareLane(options));
    this.#runsAlone = options.runsAlone;
  }

  /** Resolves with a release function once the call may start; rejects with ABORTED_BEFORE_DISPATCH if cancelled first. */
  acquire(tenant: string, plugin: string, signal: AbortSignal): Promise<() => void> {
    const lane = this.#lanes[shardOf(tenant, this.#lanes.length)] as FairShareLane;
    return lane.acquire(tenant, signal, this.#runsAlone?.(tenant, plugin) === true);
  }
}
