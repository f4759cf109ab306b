// The requests one side sent and still owes an answer to, keyed by id: the one request/reply
// table of every channel in the sandbox (host to child process, child to host, worker to host).
// Each request settles exactly once; whatever ends the channel fails all that are left.
import type { WatchAbort } from './watch-abort.js';

export interface PendingRequestsOptions<T, C> {
  /**
   * How a failed request settles. Without it the request rejects with an Error carrying the
   * reason; with it, it resolves with this value (for channels whose answers are outcomes).
   */
  readonly failed?: (reason: string) => T;
  /** Runs once per request as it settles, before its caller sees the answer. */
  readonly onSettled?: (context: C) => void;
  /** How requests' signals are watched (rpc/watch-abort.ts); needed only by a channel whose requests can be cancelled. */
  readonly watchAbort?: WatchAbort;
}

export interface AbortOptions {
  readonly signal: AbortSignal;
  /**
   * What an abort does. Without it the request fails at once ("cancelled"). With it, this
   * runs once and the request keeps waiting: the far side is told, and answers for itself.
   */
  readonly onAbort?: (id: number) => void;
}

interface Entry<T, C> {
  readonly context: C;
  readonly resolve: (value: T) => void;
  readonly reject: (error: Error) => void;
  unwatch: (() => void) | undefined;
}

export class PendingRequests<T, C = undefined> {
  readonly #pending = new Map<number, Entry<T, C>>();
  readonly #options: PendingRequestsOptions<T, C>;
  #nextId = 1;
  #closed: string | undefined;

  constructor(options: PendingRequestsOptions<T, C> = {}) {
    this.#options = options;
  }

  /** Requests still waiting for their answer. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Registers a request under a fresh id and hands the id to `send`, which puts it on the
   * wire and returns false when it could not (the request then fails at once). `context`
   * stays with the request until it settles.
   */
  request(context: C, send: (id: number) => boolean, abort?: AbortOptions): Promise<T> {
    const { watchAbort } = this.#options;
    if (abort !== undefined && watchAbort === undefined) throw new TypeError('PendingRequests: a cancellable request needs options.watchAbort');
    if (this.#closed !== undefined) return this.#failedPromise(this.#closed);
    const id = this.#nextId;
    this.#nextId += 1;
    const answer = new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { context, resolve, reject, unwatch: undefined });
    });
    if (abort !== undefined && watchAbort !== undefined) {
      const entry = this.#pending.get(id) as Entry<T, C>;
      if (abort.signal.aborted) {
        this.fail(id, 'cancelled');
        return answer;
      }
      const { onAbort: tell } = abort;
      entry.unwatch = watchAbort(abort.signal, tell === undefined ? () => this.fail(id, 'cancelled') : () => {
        entry.unwatch = undefined; // fired: nothing left to unregister
        tell(id);
      });
    }
    if (!send(id)) this.fail(id, 'could not be sent');
    return answer;
  }

  /** The context of a request still waiting, if it is. */
  context(id: number): C | undefined {
    return this.#pending.get(id)?.context;
  }

  /** The contexts of every request still waiting. */
  contexts(): C[] {
    return [...this.#pending.values()].map((entry) => entry.context);
  }

  /** Answers request `id`; false when it already settled (or never existed). */
  resolve(id: number, value: T): boolean {
    const entry = this.#take(id);
    if (entry === undefined) return false;
    entry.resolve(value);
    return true;
  }

  /** Fails request `id` with a reason; false when it already settled (or never existed). */
  fail(id: number, reason: string): boolean {
    const entry = this.#take(id);
    if (entry === undefined) return false;
    const { failed } = this.#options;
    if (failed === undefined) entry.reject(new Error(reason));
    else entry.resolve(failed(reason));
    return true;
  }

  /** Fails every request still waiting (the channel ended); new requests are still taken. */
  failAll(reason: string): void {
    for (const id of [...this.#pending.keys()]) this.fail(id, reason);
  }

  /** Fails every request still waiting, and every later one at once. */
  close(reason: string): void {
    this.#closed ??= reason;
    this.failAll(reason);
  }

  #take(id: number): Entry<T, C> | undefined {
    const entry = this.#pending.get(id);
    if (entry === undefined) return undefined;
    this.#pending.delete(id);
    entry.unwatch?.();
    this.#options.onSettled?.(entry.context);
    return entry;
  }

  #failedPromise(reason: string): Promise<T> {
    const { failed } = this.#options;
    return failed === undefined ? Promise.reject(new Error(reason)) : Promise.resolve(failed(reason));
  }
}
