// The kills in one sandbox process whose isolates may still be running: a call answered
// CPU_LIMIT, TIMEOUT or ABORTED (`stillRunning`) until the worker says its tasks stopped. A
// builtin that ignores termination can end, after its answer, in a V8 fatal error that takes
// the process down without naming anyone: until then that pair, not the calls in flight,
// answers for a death. The answer and the settle leave the child by different paths (Piscina's
// port, a BroadcastChannel), so either may arrive first; each kill is counted on its own, so
// one kill long settled never covers for a later one.
import type { InFlightPair } from './crash-quarantine.js';

type Pair = NonNullable<InFlightPair>;

/**
 * How long a kill counts as running without word from the child: past ZOMBIE_MS
 * (isolate-runner.ts) the child reports it as a zombie and is retired, so an older kill
 * means only that its settle was lost.
 */
export const KILLED_RUNNING_MS = 5000;

interface PairKills {
  readonly pair: Pair;
  /** When each kill still running was answered. */
  running: number[];
  /** Settles that arrived before their kill's answer, when. */
  settledEarly: number[];
}

export class KilledTasks {
  readonly #pairs = new Map<string, PairKills>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** A call of this pair was answered `stillRunning`. */
  answered(pair: Pair): void {
    const kills = this.#kills(pair);
    if (kills.settledEarly.length > 0) kills.settledEarly.shift();
    else kills.running.push(this.#now());
    this.#forgetIfDone(kills);
  }

  /** Every task of one killed isolate of this pair stopped. */
  settled(pair: Pair): void {
    const kills = this.#kills(pair);
    if (kills.running.length > 0) kills.running.shift();
    else kills.settledEarly.push(this.#now());
    this.#forgetIfDone(kills);
  }

  /** The pairs with a kill here still running, lately. */
  stillRunning(): Pair[] {
    const now = this.#now();
    return [...this.#pairs.values()].filter((kills) => kills.running.some((at) => now - at < KILLED_RUNNING_MS)).map((kills) => kills.pair);
  }

  #kills(pair: Pair): PairKills {
    const key = `${pair.tenant}\u0000${pair.plugin}`;
    let kills = this.#pairs.get(key);
    if (kills === undefined) {
      kills = { pair, running: [], settledEarly: [] };
      this.#pairs.set(key, kills);
    }
    const now = this.#now();
    kills.running = kills.running.filter((at) => now - at < KILLED_RUNNING_MS);
    kills.settledEarly = kills.settledEarly.filter((at) => now - at < KILLED_RUNNING_MS);
    return kills;
  }

  #forgetIfDone(kills: PairKills): void {
    if (kills.running.length === 0 && kills.settledEarly.length === 0) this.#pairs.delete(`${kills.pair.tenant}\u0000${kills.pair.plugin}`);
  }
}
