// Fuses signals so that a stage that adds a deadline or scope can never detach
// the caller's cancellation: the result aborts when any input aborts.

/** A signal that never aborts, shared so that turns without one allocate nothing. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

export function mergeAbortSignals(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined && signal !== NEVER_ABORTED);
  if (present.length === 0) return NEVER_ABORTED;
  if (present.length === 1) return present[0] as AbortSignal;
  return AbortSignal.any(present);
}

export interface LinkedAbort {
  readonly signal: AbortSignal;
  /** Aborts the linked signal only (a deadline, a scope), never the parent. */
  readonly abort: (reason: unknown) => void;
  /** Detaches from the parent; call when the scope ends so long-lived parents do not collect listeners. */
  readonly dispose: () => void;
}

/**
 * Everything following one parent signal, behind a single listener on it: a turn's signal
 * shared by many calls (or a server's by many turns) then carries one listener, not one per
 * call, and never trips MaxListenersExceededWarning.
 */
const followers = new WeakMap<AbortSignal, Set<() => void>>();

function follow(parent: AbortSignal, onAbort: () => void): () => void {
  let set = followers.get(parent);
  if (set === undefined) {
    const created = new Set<() => void>();
    set = created;
    followers.set(parent, created);
    parent.addEventListener('abort', () => {
      followers.delete(parent);
      for (const each of [...created]) each();
    }, { once: true });
  }
  const mine = set;
  mine.add(onAbort);
  return () => mine.delete(onAbort);
}

/**
 * A child signal that follows its parent. Cheaper than AbortSignal.any on the hot
 * path (no WeakRefs for the collector to chase) and explicitly disposed.
 */
export function linkAbortSignal(parent: AbortSignal): LinkedAbort {
  const controller = new AbortController();
  const abort = (reason: unknown): void => controller.abort(reason);
  if (parent === NEVER_ABORTED) return { signal: controller.signal, abort, dispose: () => undefined };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, abort, dispose: () => undefined };
  }
  const dispose = follow(parent, () => controller.abort(parent.reason));
  return { signal: controller.signal, abort, dispose };
}
