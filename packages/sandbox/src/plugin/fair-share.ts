// Work-conserving fair admission to one pool of worker threads (one lane per sandbox
// process). A call waits only when every thread it may use is busy; when several tenants
// wait, each freed thread goes to the waiting tenant holding the fewest threads per unit of
// weight (ties: the one served longest ago), so shares converge to the weights. One reserve
// thread per lane (by default) is kept for tenants with nothing running: a light tenant's
// call starts at once beside a hog that fills the pool, instead of queueing behind it.
import { ToolCallError } from '@airlock/core';
import { onAbort } from '../host/abort-fanout.js';

export interface FairShareOptions {
  /** Threads any one tenant may fill (the lane's ordinary capacity). */
  readonly threads: number;
  /** Extra threads only a tenant with nothing running may take. */
  readonly reserveThreads: number;
  /** Weight of a tenant (default 1): under contention, shares are proportional to weights. */
  readonly weightOf: (tenant: string) => number;
}

/** One queued call. */
interface Waiter {
  readonly tenant: TenantState;
  readonly admit: (release: () => void) => void;
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

export class FairShareLane {
  readonly #options: FairShareOptions;
  readonly #tenants = new Map<string, TenantState>();
  /** Tenants with at least one queued call. */
  readonly #waiting = new Set<TenantState>();
  #running = 0;
  #served = 0;

  constructor(options: FairShareOptions) {
    this.#options = options;
  }

  /** Calls running in this lane now. */
  get running(): number {
    return this.#running;
  }

  /** Resolves with a release function once admitted; rejects with ABORTED_BEFORE_DISPATCH if cancelled first. */
  acquire(tenant: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(notDispatched());
    const state = this.#tenant(tenant);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { tenant: state, admit: resolve, refuse: reject, unwatch: () => undefined };
      state.queue.push(waiter);
      this.#waiting.add(state);
      // One listener per signal, not per waiter (abort-fanout).
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

  /** Admits queued calls while the lane has room, in fair order. */
  #pump(): void {
    for (;;) {
      const next = this.#pick();
      if (next === undefined) return;
      const waiter = next.queue[0] as Waiter;
      const roomy = this.#running < this.#options.threads;
      const reserved = next.running === 0 && this.#running < this.#options.threads + this.#options.reserveThreads;
      if (!roomy && !reserved) return;
      this.#admit(waiter);
    }
  }

  /** The waiting tenant with the fewest running calls per unit of weight; ties go to the one served longest ago. */
  #pick(): TenantState | undefined {
    let best: TenantState | undefined;
    for (const state of this.#waiting) {
      if (best === undefined) {
        best = state;
        continue;
      }
      const share = state.running / state.weight;
      const bestShare = best.running / best.weight;
      if (share < bestShare || (share === bestShare && state.lastServed < best.lastServed)) best = state;
    }
    return best;
  }

  #admit(waiter: Waiter): void {
    const state = waiter.tenant;
    state.queue.shift();
    if (state.queue.length === 0) this.#waiting.delete(state);
    waiter.unwatch();
    state.running += 1;
    state.lastServed = this.#served;
    this.#served += 1;
    this.#running += 1;
    let released = false;
    waiter.admit(() => {
      if (released) return;
      released = true;
      state.running -= 1;
      this.#running -= 1;
      if (state.running === 0 && state.queue.length === 0) this.#tenants.delete(state.name);
      this.#pump();
    });
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
