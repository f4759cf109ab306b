// How a channel learns that a request's caller gave up. Passed in, not imported: the sandbox
// process and its pool workers load none of @airlock/core (about 120 ms of every start, per
// process and per worker thread), while the embedder's side uses core's onAbort (one listener
// per signal however many requests share it).

/** Calls `callback` once when `signal` aborts; the function returned stops watching. */
export type WatchAbort = (signal: AbortSignal, callback: () => void) => () => void;

/** For a signal that only one request ever watches (an AbortController of the request's own). */
export const watchOwnSignal: WatchAbort = (signal, callback) => {
  signal.addEventListener('abort', callback, { once: true });
  return () => signal.removeEventListener('abort', callback);
};
