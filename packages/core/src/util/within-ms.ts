// Waits for a hook the host supplied, but only so long: one that never settles must not leave
// its call or turn without an answer.

/** What `work` settles to, or a rejection with `timedOut` once `ms` milliseconds have passed. */
export function withinMs<T>(work: Promise<T>, ms: number, timedOut: unknown): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
