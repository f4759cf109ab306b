// Waits for a hook the host supplied, but no longer than the caller wants the answer: a
// guard or preparation that never settles must not hold a cancelled turn for ever.
import { NEVER_ABORTED } from './merge-abort-signals.js';
import { onAbort } from './on-abort.js';

/** What `work` resolves to, or ABORTED once `signal` aborts first (work's own outcome is then ignored). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  // A call nobody can cancel (the per-call hot path without a signal): nothing to race.
  if (signal === NEVER_ABORTED) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  let stop: () => void = () => undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => (stop = onAbort(signal, () => resolve(ABORTED))));
  work.catch(() => undefined); // settled later, after the turn moved on: nothing to report
  return Promise.race([work, aborted]).finally(stop);
}

export const ABORTED: unique symbol = Symbol('aborted');
