// Which idle pool worker takes a task. Each worker keeps its own isolate per tenant and
// plugin, up to MAX_ISOLATES_PER_WORKER (least recently used evicted). While the tenants in
// play fit in one worker, the first idle worker takes the task, as Piscina would pick: work
// stays on the fewest threads, and every worker soon holds every tenant's isolate. Once
// more tenants are in play than a worker holds, that spreads each tenant over every worker
// and they evict one another (100 tenants on two workers: twice the isolates and cold
// starts); then a tenant's task goes to the worker that ran its last one when that worker
// is idle, so the workers its calls overlapped on each keep a share of the tenants instead
// of all of them. (A new tenant still takes the first idle worker, and calls that never
// overlap use one worker whatever the policy.) Either way only an idle worker takes a
// task: a busy preferred worker is never waited for.
import { MAX_ISOLATES_PER_WORKER } from '../isolate/isolate-cap.js';
import type { SandboxTask } from '../worker/worker-protocol.js';

/** What the balancer needs of a Piscina worker. */
export interface RoutableWorker {
  readonly id: number;
  readonly currentUsage: number;
}

/** Tenants and plugins remembered; past this the least recently routed are forgotten. */
const MAX_REMEMBERED = 4096;
/** Tasks whose keys say how many tenants are in play: the last this many routed. */
const WINDOW = 4 * MAX_ISOLATES_PER_WORKER;

export class WorkerAffinity {
  /** Tenant-and-plugin key -> the worker that ran its last task; insertion order is recency. */
  readonly #lastWorker = new Map<string, number>();
  /** The keys of the last WINDOW tasks routed (a ring), and how often each occurs in it. */
  readonly #window: (string | undefined)[] = [];
  #next = 0;
  readonly #inWindow = new Map<string, number>();

  /**
   * The idle worker for a task of `key` (undefined: a task of no tenant), or undefined when
   * every worker is busy. Remembers the choice.
   */
  choose<W extends RoutableWorker>(key: string | undefined, workers: Iterable<W>): W | undefined {
    const preferred = key === undefined || this.#inWindow.size <= MAX_ISOLATES_PER_WORKER ? undefined : this.#lastWorker.get(key);
    let chosen: W | undefined;
    for (const worker of workers) {
      if (worker.currentUsage !== 0) continue;
      if (worker.id === preferred) {
        chosen = worker;
        break;
      }
      chosen ??= worker;
    }
    if (chosen !== undefined && key !== undefined) this.#remember(key, chosen.id);
    return chosen;
  }

  #remember(key: string, workerId: number): void {
    this.#lastWorker.delete(key);
    this.#lastWorker.set(key, workerId);
    if (this.#lastWorker.size > MAX_REMEMBERED) this.#lastWorker.delete(this.#lastWorker.keys().next().value as string);
    const leaving = this.#window[this.#next];
    if (leaving !== undefined) {
      const left = (this.#inWindow.get(leaving) ?? 1) - 1;
      if (left === 0) this.#inWindow.delete(leaving);
      else this.#inWindow.set(leaving, left);
    }
    this.#window[this.#next] = key;
    this.#next = (this.#next + 1) % WINDOW;
    this.#inWindow.set(key, (this.#inWindow.get(key) ?? 0) + 1);
  }
}

/** Whose isolate a task runs in: its tenant's for its plugin (describe and ping run in none). */
export function affinityKey(task: SandboxTask): string | undefined {
  return task.kind === 'call' || task.kind === 'classify' ? `${task.tenant}\u0000${task.plugin.key}` : undefined;
}
