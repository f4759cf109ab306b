// Which of a pool's workers is building ahead right now (a spare realm, an isolate for the
// next new tenant), shared with the workers. A worker does that synchronously, for up to
// about a millisecond, right after it answered a task; a task sent to it then waits until
// the step is done. The pool's balancer reads this board and gives a fresh-realm call to an
// idle worker that is not building when there is one, so back-to-back fresh calls alternate
// between threads and each finds the realm the other built while it ran.
//
// A slot per worker, found by thread id modulo the slot count, holds that thread id and a
// flag. Two live workers that share a slot only make the board say "not building" for one of
// them: the board steers the choice of a worker, never whether a task runs.
const SLOTS = 64;
const FIELDS = 2;
const THREAD = 0;
const BUILDING = 1;

export class BuildBoard {
  /** Pass to the workers (Piscina's workerData): each marks its own slot with BuildMarker. */
  readonly buffer = new SharedArrayBuffer(SLOTS * FIELDS * Int32Array.BYTES_PER_ELEMENT);
  readonly #slots = new Int32Array(this.buffer);

  /** The worker with this thread id is in a build-ahead step. */
  isBuilding(threadId: number): boolean {
    const at = slotOf(threadId);
    return Atomics.load(this.#slots, at + THREAD) === threadId && Atomics.load(this.#slots, at + BUILDING) === 1;
  }
}

/** The worker side: marks the start and end of each build-ahead step. */
export class BuildMarker {
  readonly #slots: Int32Array;
  readonly #at: number;
  readonly #threadId: number;

  constructor(buffer: SharedArrayBuffer, threadId: number) {
    this.#slots = new Int32Array(buffer);
    this.#at = slotOf(threadId);
    this.#threadId = threadId;
  }

  building(active: boolean): void {
    // The flag first, then the owner: a reader that sees this thread as the owner sees its flag.
    Atomics.store(this.#slots, this.#at + BUILDING, active ? 1 : 0);
    Atomics.store(this.#slots, this.#at + THREAD, this.#threadId);
  }
}

/** A worker as Piscina's `loadBalancer` option sees it: the fields this module reads. */
export interface BalancedWorker {
  readonly id: number;
  readonly currentUsage: number;
}

/**
 * Piscina's own choice with one task per worker (the first idle worker), except that for a
 * task that may run on any worker as well as another (a fresh-realm call: its realm is new
 * wherever it runs) an idle worker in the middle of building ahead comes after one that is
 * not. Other tasks keep the first idle worker: a warm realm lives in one thread, and its
 * tenant's calls should keep finding it. Never refuses while a worker is idle: a refusal
 * would leave the task queued until some other task ends.
 */
export function preferNotBuilding<T, W extends BalancedWorker>(board: BuildBoard, mayMove: (task: T) => boolean): (task: T, workers: readonly W[]) => W | null {
  return (task, workers) => {
    const steer = mayMove(task);
    let building: W | null = null;
    for (const worker of workers) {
      if (worker.currentUsage !== 0) continue;
      if (!steer || !board.isBuilding(worker.id)) return worker;
      building ??= worker;
    }
    return building;
  };
}

function slotOf(threadId: number): number {
  return (threadId % SLOTS) * FIELDS;
}
