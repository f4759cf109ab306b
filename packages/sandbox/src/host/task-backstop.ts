// The host's last line for a worker that stops answering (a thread stuck on an isolate's
// lock, a native call that never returns): a task still unanswered its budget plus a
// grace after it *started* in a worker is aborted, which makes Piscina replace the worker,
// and its call is answered. Time spent queued for a worker is never counted.
//
// This is on every sandboxed call's path, so it costs no timer, AbortController or shared
// buffer per task: workers stamp a start time into a slot of one buffer shared with the
// pool, and one sweep a pool checks every armed task.
import type { WatchAbort } from '../rpc/watch-abort.js';
import { OWN_CLOCK_CANCEL_OFFSET, type SandboxTask } from '../worker/worker-protocol.js';
import { taskBudget } from '../isolate/task-budgets.js';

/** Beyond the task's own wall-clock budget, before the worker is given up on. */
export const BACKSTOP_GRACE_MS = 1000;
/** How often armed tasks are checked; small beside the grace. */
const SWEEP_MS = 100;
/** A task's own clock when every slot is taken: its start time (Float64), then its cancel flag (Int32) at OWN_CLOCK_CANCEL_OFFSET. */
const OWN_CLOCK_BYTES = 16;
/** Start-time slots shared with the workers; more tasks in flight than this get a buffer of their own. */
const CLOCK_SLOTS = 1024;

/** The task's own wall-clock budget (task-budgets.ts, the one the worker's watchdog enforces). */
export function taskTimeoutMs(task: SandboxTask): number {
  return taskBudget(task).timeoutMs;
}

/** Where a worker stamps the task's start: a slot of the pool's shared clocks, or (all taken) a buffer of the task's own. */
export type TaskClock = number | SharedArrayBuffer;

/**
 * The abort signal handed to Piscina, in the shape Piscina documents for its `signal` option
 * (AbortSignalEventTarget): one listener, Piscina's own, set once per task.
 */
class TaskSignal {
  aborted = false;
  reason: unknown;
  #listener: (() => void) | undefined;

  addEventListener(_name: 'abort', listener: () => void): void {
    this.#listener = listener;
  }

  removeEventListener(): void {
    this.#listener = undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }
}

/**
 * Set by the pool's balancer when it hands the task to a worker (InProcessHost): from then on
 * a cancel is the worker's to carry out (the flag), never Piscina's (it would terminate the
 * worker, even one still starting, which can abort the process).
 */
export interface DispatchMark {
  dispatched: boolean;
}

export interface ArmedTask {
  /** For the pool's balancer to mark (see DispatchMark). */
  readonly dispatch: DispatchMark;
  /** Aborts when the task overran, or when the caller's signal does: the one signal to hand Piscina. */
  readonly signal: TaskSignal;
  /** Where the worker stamps the task's start. */
  readonly clock: TaskClock;
  /** The task overran (as opposed to being cancelled by its caller). */
  readonly fired: () => boolean;
  /** A worker started the task (it stamped its clock); read before stop(). */
  readonly started: () => boolean;
  /** The task was answered: disarm, and free its clock. */
  stop(): void;
}

interface Armed {
  readonly signal: TaskSignal;
  readonly startedAt: () => number;
  readonly limitMs: number;
  fired: boolean;
}

/** One pool's backstop: its shared start clocks and the sweep over its armed tasks. */
export class TaskBackstop {
  /** Pass to the workers (Piscina's workerData): the slots they stamp. */
  readonly clocks = new SharedArrayBuffer(CLOCK_SLOTS * Float64Array.BYTES_PER_ELEMENT);
  readonly #times = new Float64Array(this.clocks);
  /** Pass to the workers too: per slot, 1 once the task's caller cancelled it (see ArmedTask.cancel). */
  readonly cancels = new SharedArrayBuffer(CLOCK_SLOTS * Int32Array.BYTES_PER_ELEMENT);
  readonly #cancelled = new Int32Array(this.cancels);
  readonly #freeSlots: number[] = Array.from({ length: CLOCK_SLOTS }, (_, slot) => CLOCK_SLOTS - 1 - slot);
  readonly #armed = new Set<Armed>();
  #sweep: ReturnType<typeof setInterval> | undefined;
  readonly #watchAbort: WatchAbort;

  constructor(watchAbort: WatchAbort) {
    this.#watchAbort = watchAbort;
  }

  arm(task: SandboxTask, caller: AbortSignal | undefined): ArmedTask {
    const signal = new TaskSignal();
    const slot = this.#freeSlots.pop();
    let clock: TaskClock;
    let startedAt: () => number;
    let markCancelled: () => void;
    if (slot === undefined) {
      const buffer = new SharedArrayBuffer(OWN_CLOCK_BYTES);
      const own = new Float64Array(buffer, 0, 1);
      clock = buffer;
      startedAt = () => own[0] ?? 0;
      markCancelled = () => Atomics.store(new Int32Array(buffer, OWN_CLOCK_CANCEL_OFFSET, 1), 0, 1);
    } else {
      this.#times[slot] = 0;
      Atomics.store(this.#cancelled, slot, 0);
      clock = slot;
      startedAt = () => this.#times[slot] ?? 0;
      markCancelled = () => Atomics.store(this.#cancelled, slot, 1);
    }
    const armed: Armed = { signal, startedAt, limitMs: taskTimeoutMs(task) + BACKSTOP_GRACE_MS, fired: false };
    this.#armed.add(armed);
    this.#sweep ??= setInterval(() => this.#check(), SWEEP_MS).unref();
    // The caller's cancel: the worker stops a running task itself (its watchdog reads the flag
    // and disposes the isolate); only a task no worker has started is withdrawn from Piscina.
    // Piscina would terminate the worker of a running task, and a worker terminated inside an
    // isolated-vm call can abort the whole process (an attacker cancelling its own calls in a
    // loop did, taking its neighbours' calls down).
    const dispatch: DispatchMark = { dispatched: false };
    const cancel = (): void => {
      markCancelled();
      if (!dispatch.dispatched) signal.abort(caller?.reason);
    };
    if (caller?.aborted === true) cancel();
    const unwatch = caller === undefined || caller.aborted ? undefined : this.#watchAbort(caller, cancel);
    return {
      signal,
      clock,
      dispatch,
      fired: () => armed.fired,
      started: () => startedAt() !== 0,
      stop: () => {
        if (!this.#armed.delete(armed)) return;
        unwatch?.();
        if (slot !== undefined) this.#freeSlots.push(slot);
      },
    };
  }

  #check(): void {
    if (this.#armed.size === 0) {
      // Idle: the sweep stops, and the next task starts it again.
      clearInterval(this.#sweep);
      this.#sweep = undefined;
      return;
    }
    const now = Date.now();
    for (const armed of this.#armed) {
      const at = armed.startedAt();
      if (at !== 0 && now - at >= armed.limitMs && !armed.fired) {
        armed.fired = true;
        armed.signal.abort(new Error('the sandbox worker stopped answering'));
      }
    }
  }
}
