// Who answers for a sandbox process that died with calls in flight, most certain first: the
// pair the child named (V8 lost control of its isolate), the pairs whose killed isolates were
// still running (a builtin that ignores termination ends in a fatal error), and otherwise
// every pair in flight (the quarantine makes them suspects, or strikes a lone one); for a
// kill at the memory ceiling, with them the pairs just answered MEMORY_LIMIT, whose memory
// outlives their answer. Added, not instead: a lone neighbour in flight is then no longer
// struck for an attacker's rope, but nor can an attacker's throwaway pair that answered
// MEMORY_LIMIT take a strike for memory its other pair holds while that one goes free.
import type { InFlightPair } from './crash-quarantine.js';

type Pair = NonNullable<InFlightPair>;

export interface DeathFacts {
  readonly named: Pair | undefined;
  readonly stillRunning: readonly Pair[];
  readonly atMemoryCeiling: boolean;
  readonly memoryOffenders: readonly Pair[];
  readonly inFlight: readonly InFlightPair[];
}

/** The pairs to hand the quarantine, or undefined when the death cost no call and nobody is named. */
export function blameForDeath(facts: DeathFacts): readonly InFlightPair[] | undefined {
  if (facts.named !== undefined) return [facts.named];
  if (facts.inFlight.length === 0) return undefined;
  if (facts.stillRunning.length > 0) return facts.stillRunning;
  if (!facts.atMemoryCeiling || facts.memoryOffenders.length === 0) return facts.inFlight;
  const inFlight = new Set(facts.inFlight.map((pair) => (pair === undefined ? '' : `${pair.tenant}\u0000${pair.plugin}`)));
  return [...facts.inFlight, ...facts.memoryOffenders.filter((pair) => !inFlight.has(`${pair.tenant}\u0000${pair.plugin}`))];
}
