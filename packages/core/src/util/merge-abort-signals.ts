// Fuses signals so that a stage that adds a deadline or scope can never detach
// the caller's cancellation: the result aborts when any input aborts.
export function mergeAbortSignals(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (present.length === 1) return present[0] as AbortSignal;
  return AbortSignal.any(present);
}
