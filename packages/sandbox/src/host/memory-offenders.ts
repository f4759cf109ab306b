// The pairs whose calls were answered MEMORY_LIMIT lately in one sandbox process. One
// allocation can outrun an isolate's limit by itself (flattening a rope string makes it
// whole: up to 1 GiB, whatever memoryMb is), and the process still holds that memory for a
// moment after the call is answered. A ceiling kill then is that pair's doing, not the
// doing of the calls still in flight: a re-attack had five such calls answered, and the
// kill half a second later ended, and struck, the one neighbour call left in flight.
import type { InFlightPair } from './crash-quarantine.js';

type Pair = NonNullable<InFlightPair>;

/** How long after its MEMORY_LIMIT answer a pair still answers for a ceiling kill. */
export const RECENT_MEMORY_MS = 5000;

export class MemoryOffenders {
  readonly #answered = new Map<string, { readonly pair: Pair; readonly at: number }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** A call of this pair was answered MEMORY_LIMIT. */
  answered(pair: Pair): void {
    this.#forgetOld();
    this.#answered.set(`${pair.tenant}\u0000${pair.plugin}`, { pair, at: this.#now() });
  }

  /** The pairs answered MEMORY_LIMIT within RECENT_MEMORY_MS. */
  recent(): Pair[] {
    this.#forgetOld();
    return [...this.#answered.values()].map((entry) => entry.pair);
  }

  #forgetOld(): void {
    const now = this.#now();
    for (const [key, entry] of this.#answered) if (now - entry.at >= RECENT_MEMORY_MS) this.#answered.delete(key);
  }
}
