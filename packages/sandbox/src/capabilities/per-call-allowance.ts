// What one call may spend in all of a resource its capability requests use on the embedder's
// main thread (bytes read, entries listed), counted per call by the call's context.
import type { CapabilityContext } from '../plugin/capability-handler.js';
import { CapabilityRefusal } from './capability-argument.js';

export class PerCallAllowance {
  readonly #spent = new WeakMap<CapabilityContext, number>();
  readonly #refusal: (max: number) => string;

  /** `refusal` says, for the allowance `max`, that the call has spent it. */
  constructor(refusal: (max: number) => string) {
    this.#refusal = refusal;
  }

  /** Refuses a call that has nothing left, before any work. */
  check(context: CapabilityContext, max: number): void {
    if ((this.#spent.get(context) ?? 0) >= max) throw new CapabilityRefusal(this.#refusal(max));
  }

  /** Counts `amount`, or refuses (counting nothing) when it would pass `max`; checked and counted in one turn, so requests at once cannot all pass. */
  charge(context: CapabilityContext, amount: number, max: number): void {
    const spent = (this.#spent.get(context) ?? 0) + amount;
    if (spent > max) throw new CapabilityRefusal(this.#refusal(max));
    this.#spent.set(context, spent);
  }
}
