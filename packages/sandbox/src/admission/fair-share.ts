// Work-conserving fair admission to the sandbox's threads. At most `threads` calls run at
// once across every sandbox process (one tenant may fill them all), plus `reserveThreads`
// kept for tenants with nothing running, so a light tenant's call starts at once beside a
// hog that fills the pool. A call waits only when no thread it may use is free; when
// several tenants wait, each freed thread goes to the waiting tenant holding the fewest
// threads per unit of weight (ties: the one served longest ago), so shares converge to the
// weights. Each call also runs in one process (its placement), whose pool bounds how many
// calls may run there; a queued call's placement is asked again whenever it could start, so
// a crash that moves its pair (to probation, or back) while it waits moves the call too. Keeping the total at the thread count, whatever the number of
// processes, keeps the cores from being oversubscribed: isolated-vm's CPU time counts time
// a running isolate waits for a core, so oversubscription would read as CPU_LIMIT.
import { ToolCallError } from '@airlock/core';
import { onAbort } from '@airlock/core';

export interface FairShareOptions {
  /** Calls running at once, across all processes, that any one tenant may fill. */
  readonly threads: number;
  /** Extra calls only a tenant with nothing running may start. */
  readonly reserveThreads: number;
  /** How many calls each placement (sandbox process) may run at once: its pool's threads. */
  readonly placements: readonly number[];
  /** Weight of a tenant (default 1): under contention, shares are proportional to weights. */
  readonly weightOf: (tenant: string) => number;
  /**
   * How long a tenant's thread stays claimed after its last call ended with none queued
   * (default CLAIM_MS): meanwhile a tenant that already runs calls may not take it.
   */
  readonly claimMs?: number;
}

/**
 * A tenant that calls one call at a time leaves its thread for a moment between calls; a
 * hog with calls queued would take it at once, and the light tenant's next call would then
 * run on the reserve beside two of the hog's, sharing a core. Held this briefly, the thread
 * is there for its next call; a tenant that really left costs the others at most this long.
 */
export const CLAIM_MS = 10;

/** A call admitted: where it runs, and how to free its thread once it is answered. */
export interface Admitted {
  readonly release: () => void;
  readonly placement: number;
}

/** Where a call runs now: a fixed placement, or one asked each time the call could start. */
export type Placement = number | (() => number);

/** One queued call. */
interface Waiter {
  readonly tenant: TenantState;
  readonly placementOf: () => number;
  readonly admit: (admitted: Admitted) => void;
  readonly refuse: (error: Error) => void;
  /** Stops watching the signal (set once queued). */
  unwatch: () => void;
}

interface TenantState {
  readonly name: string;
  readonly weight: number;
  running: number;
  readonly queue: Waiter[];
  /** Admission sequence of its last admitted call: the round-robin tie-break. */
  lastServed: number;
}

export class FairShare {
  readonly #options: FairShareOptions;
  readonly #tenants = new Map<string, TenantState>();
  /** Tenants with at least one queued call. */
  readonly #waiting = new Set<TenantState>();
  readonly #runningAt: number[];
  #running = 0;
  #served = 0;
  /** Tenants whose last call just ended with none queued, and until when their thread is claimed. */
  readonly #claims = new Map<string, number>();
  #claimTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #claimMs: number;

  constructor(options: FairShareOptions) {
    this.#options = options;
    this.#runningAt = options.placements.map(() => 0);
    this.#claimMs = options.claimMs ?? CLAIM_MS;
  }

  /** Calls running now, in all placements. */
  get running(): number {
    return this.#running;
  }

  /**
   * Resolves once admitted, with the placement it was admitted to (the one `placement` gave
   * at that moment); rejects with ABORTED_BEFORE_DISPATCH if cancelled first.
   */
  acquire(tenant: string, placement: Placement, signal: AbortSignal): Promise<Admitted> {
    if (signal.aborted) return Promise.reject(notDispatched());
    const state = this.#tenant(tenant);
    const placementOf = typeof placement === 'number' ? () => placement : placement;
    // Nobody waits and there is room: start now, with no queue entry and no abort listener
    // (this is the path of every call on a pool that is not full).
    if (this.#waiting.size === 0) {
      const now = placementOf();
      if (this.#mayStart(state, now)) return Promise.resolve({ release: this.#start(state, now), placement: now });
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { tenant: state, placementOf, admit: resolve, refuse: reject, unwatch: () => undefined };
      state.queue.push(waiter);
      this.#waiting.add(state);
      // One listener per signal, not per waiter (core's onAbort).
      waiter.unwatch = onAbort(signal, () => {
        this.#drop(waiter);
        this.#pump();
      });
      this.#pump();
    });
  }

  #tenant(name: string): TenantState {
    let state = this.#tenants.get(name);
    if (state === undefined) {
      state = { name, weight: this.#options.weightOf(name), running: 0, queue: [], lastServed: -1 };
      this.#tenants.set(name, state);
    }
    return state;
  }

  /** Admits queued calls while there is room, in fair order. */
  #pump(): void {
    for (let next = this.#pick(); next !== undefined; next = this.#pick()) this.#admit(next.state.queue[0] as Waiter, next.placement);
  }

  /**
   * The waiting tenant with the fewest running calls per unit of weight (ties: served
   * longest ago) among those whose next call may start now, and where that call runs.
   */
  #pick(): { readonly state: TenantState; readonly placement: number } | undefined {
    let best: TenantState | undefined;
    let bestPlacement = 0;
    for (const state of this.#waiting) {
      const placement = (state.queue[0] as Waiter).placementOf();
      if (!this.#mayStart(state, placement)) continue;
      if (best !== undefined) {
        const share = state.running / state.weight;
        const bestShare = best.running / best.weight;
        if (share > bestShare || (share === bestShare && state.lastServed >= best.lastServed)) continue;
      }
      best = state;
      bestPlacement = placement;
    }
    return best === undefined ? undefined : { state: best, placement: bestPlacement };
  }

  /**
   * Whether a call of this tenant may start in this placement now. A tenant with nothing
   * running may use the reserve; one with calls running may not take a thread another
   * tenant claims (see CLAIM_MS).
   */
  #mayStart(state: TenantState, placement: number): boolean {
    const { threads, reserveThreads, placements } = this.#options;
    if ((this.#runningAt[placement] as number) >= (placements[placement] as number)) return false;
    if (state.running === 0) return this.#running < threads + reserveThreads;
    const claimedByOthers = this.#claims.size - (this.#claims.has(state.name) ? 1 : 0);
    return this.#running + claimedByOthers < threads;
  }

  /** The tenant's last call ended and none is queued: its thread stays claimed a moment. */
  #claim(state: TenantState): void {
    if (this.#claimMs <= 0) return;
    this.#claims.set(state.name, performance.now() + this.#claimMs);
    this.#claimTimer ??= setTimeout(() => this.#expireClaims(), this.#claimMs);
    this.#claimTimer.unref?.();
  }

  #expireClaims(): void {
    this.#claimTimer = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const [tenant, until] of this.#claims) {
      if (until <= now) this.#claims.delete(tenant);
      else next = Math.min(next, until);
    }
    if (next !== Infinity) this.#claimTimer = setTimeout(() => this.#expireClaims(), Math.max(1, next - now));
    this.#pump();
  }

  #admit(waiter: Waiter, placement: number): void {
    const state = waiter.tenant;
    state.queue.shift();
    if (state.queue.length === 0) this.#waiting.delete(state);
    waiter.unwatch();
    waiter.admit({ release: this.#start(state, placement), placement });
  }

  /** Counts a call as running; the function it returns frees its thread (once). */
  #start(state: TenantState, placement: number): () => void {
    this.#claims.delete(state.name);
    state.running += 1;
    state.lastServed = this.#served;
    this.#served += 1;
    this.#running += 1;
    this.#runningAt[placement] = (this.#runningAt[placement] as number) + 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.running -= 1;
      this.#running -= 1;
      this.#runningAt[placement] = (this.#runningAt[placement] as number) - 1;
      if (state.running === 0 && state.queue.length === 0) {
        this.#tenants.delete(state.name);
        this.#claim(state);
      }
      this.#pump();
    };
  }

  /** A call cancelled while queued: out of the queue, answered as never dispatched. */
  #drop(waiter: Waiter): void {
    const state = waiter.tenant;
    const index = state.queue.indexOf(waiter);
    if (index < 0) return; // already admitted
    state.queue.splice(index, 1);
    if (state.queue.length === 0) {
      this.#waiting.delete(state);
      if (state.running === 0) this.#tenants.delete(state.name);
    }
    waiter.refuse(notDispatched());
  }
}

function notDispatched(): ToolCallError {
  return new ToolCallError('ABORTED_BEFORE_DISPATCH', 'cancelled while waiting for a sandbox thread');
}
