// Per-tenant concurrency caps: one tenant can occupy at most `limit` sandbox slots,
// so a tenant flooding the pool (or stuck on runaway plugins) cannot starve the others.
export class TenantGate {
  readonly #limit: number;
  readonly #tenants = new Map<string, { active: number; waiting: (() => void)[] }>();

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
        signal.removeEventListener('abort', onAbort);
        entry.active += 1;
        resolve(release);
      };
      const onAbort = (): void => {
        const index = entry.waiting.indexOf(admit);
        if (index >= 0) entry.waiting.splice(index, 1);
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      entry.waiting.push(admit);
    });
  }
}
