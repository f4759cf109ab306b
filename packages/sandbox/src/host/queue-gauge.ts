// How many tasks a pool was given that no worker has started yet, shared with the workers:
// a worker builds ahead (a spare realm, an isolate for the next new tenant) only while this
// is zero, so nothing is ever prepared while a call waits for a worker.
const SUBMITTED = 0;
const STARTED = 1;

export class QueueGauge {
  /** Pass to the workers (Piscina's workerData); they read it with `nothingQueued`. */
  readonly buffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  readonly #counts = new Int32Array(this.buffer);

  /** A task went to the pool. */
  submitted(): void {
    Atomics.add(this.#counts, SUBMITTED, 1);
  }

  /** A task the pool answered without any worker starting it (cancelled, or the pool failed). */
  dropped(): void {
    Atomics.sub(this.#counts, SUBMITTED, 1);
  }

  /** The pool is closing: from now on the gauge never reads empty, so no worker builds ahead. */
  closing(): void {
    Atomics.add(this.#counts, SUBMITTED, CLOSED_MARK);
  }
}

/** Far more than any real queue: added once at close. */
const CLOSED_MARK = 1 << 24;

/** The worker side: stamp each task started; ask whether any waits. */
export class QueueReader {
  readonly #counts: Int32Array;

  constructor(buffer: SharedArrayBuffer) {
    this.#counts = new Int32Array(buffer);
  }

  started(): void {
    Atomics.add(this.#counts, STARTED, 1);
  }

  nothingQueued(): boolean {
    return Atomics.load(this.#counts, SUBMITTED) - Atomics.load(this.#counts, STARTED) <= 0;
  }
}
