// One "abort" listener per signal, however many calls wait on it. Signals are often
// shared (a turn's signal, or core's never-aborting signal for calls without one), and a
// listener per waiting call would pile up past Node's MaxListenersExceededWarning.

const watchers = new WeakMap<AbortSignal, { readonly callbacks: Set<() => void>; readonly onAbort: () => void }>();

/** Calls `callback` once if `signal` aborts; returns the function that stops watching. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let entry = watchers.get(signal);
  if (entry === undefined) {
    const callbacks = new Set<() => void>();
    const fire = (): void => {
      watchers.delete(signal);
      for (const each of callbacks) each();
    };
    entry = { callbacks, onAbort: fire };
    watchers.set(signal, entry);
    signal.addEventListener('abort', fire, { once: true });
  }
  // A wrapper per registration, so one callback registered twice is two registrations.
  const registration = (): void => callback();
  entry.callbacks.add(registration);
  const watched = entry;
  return () => {
    watched.callbacks.delete(registration);
    if (watched.callbacks.size === 0 && watchers.get(signal) === watched) {
      watchers.delete(signal);
      signal.removeEventListener('abort', watched.onAbort);
    }
  };
}
