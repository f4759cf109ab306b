// Fuses signals so that a stage that adds a deadline or scope can never detach
// the caller's cancellation: the result aborts when any input aborts.
import { onAbort } from './on-abort.js';

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
  // One listener on the parent however many calls follow it (onAbort).
  const dispose = onAbort(parent, () => controller.abort(parent.reason));
  return { signal: controller.signal, abort, dispose };
}
