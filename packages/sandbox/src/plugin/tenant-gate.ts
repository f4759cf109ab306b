// Per-tenant concurrency caps: one tenant can occupy at most `limit` sandbox slots,
// so a tenant flooding the pool (or stuck on runaway plugins) cannot starve the others.
export class TenantGate {
  readonly #limit: number;
  readonly #tenants = new Map<string, { active: number; waiting: (() => void)[] }>();
  readonly #watched = new Map<AbortSignal, { waiters: Set<() => void>; listener: () => void }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves with a release function once the tenant has a free slot; rejects if aborted while waiting. */
  acquire(tenant: string, signal: AbortSignal): Promise<() => void> {
    let state = this.#tenants.get(tenant);
    if (state === undefined) {
      state = { active: 0, waiting: [] };
      this.#tenants.set(tenant, state);
    }
    const entry = state;
    const release = (): void => {
      entry.active -= 1;
      const next = entry.waiting.shift();
      if (next !== undefined) next();
      else if (entry.active === 0) this.#tenants.delete(tenant);
    };
    if (entry.active < this.#limit) {
      entry.active += 1;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const admit = (): void => {
        unwatch();
        entry.active += 1;
        resolve(release);
      };
      const onAbort = (): void => {
        const index = entry.waiting.indexOf(admit);
        if (index >= 0) entry.waiting.splice(index, 1);
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      const unwatch = this.#watch(signal, onAbort);
      entry.waiting.push(admit);
    });
  }

  /**
   * One abort listener per signal, however many of its calls wait: the calls of a turn
   * share its signal (or the shared never-aborting one), and a listener per waiter would
   * pile up past Node's MaxListeners warning on any busy tenant.
   */
  #watch(signal: AbortSignal, onAbort: () => void): () => void {
    let watch = this.#watched.get(signal);
    if (watch === undefined) {
      const waiters = new Set<() => void>();
      const listener = (): void => {
        this.#watched.delete(signal);
        for (const waiter of waiters) waiter();
      };
      watch = { waiters, listener };
      this.#watched.set(signal, watch);
      signal.addEventListener('abort', listener, { once: true });
    }
    const current = watch;
    current.waiters.add(onAbort);
    return () => {
      current.waiters.delete(onAbort);
      if (current.waiters.size === 0 && this.#watched.get(signal) === current) {
        // Nobody of this signal waits any more: no listener, no entry is left behind.
        signal.removeEventListener('abort', current.listener);
        this.#watched.delete(signal);
      }
    };
  }
}
