// The host's last line for a worker that stops answering (a thread stuck on an isolate's
// lock, a native call that never returns): a task still unanswered its budget plus a
// grace after it *started* in a worker is aborted, which makes Piscina replace the worker,
// and its call is answered. Time spent queued for a worker is never counted.
//
// This is on every sandboxed call's path, so it costs no timer, AbortController or shared
// buffer per task: workers stamp a start time into a slot of one buffer shared with the
// pool, and one sweep a pool checks every armed task.
import { onAbort } from '@airlock/core';
import type { SandboxTask } from '../worker/worker-protocol.js';
import { taskBudget } from '../isolate/task-budgets.js';

/** Beyond the task's own wall-clock budget, before the worker is given up on. */
export const BACKSTOP_GRACE_MS = 1000;
/** How often armed tasks are checked; small beside the grace. */
const SWEEP_MS = 100;
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

export interface ArmedTask {
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
  readonly #freeSlots: number[] = Array.from({ length: CLOCK_SLOTS }, (_, slot) => CLOCK_SLOTS - 1 - slot);
  readonly #armed = new Set<Armed>();
  #sweep: ReturnType<typeof setInterval> | undefined;

  arm(task: SandboxTask, caller: AbortSignal | undefined): ArmedTask {
    const signal = new TaskSignal();
    const slot = this.#freeSlots.pop();
    let clock: TaskClock;
    let startedAt: () => number;
    if (slot === undefined) {
      const own = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));
      clock = own.buffer as SharedArrayBuffer;
      startedAt = () => own[0] ?? 0;
    } else {
      this.#times[slot] = 0;
      clock = slot;
      startedAt = () => this.#times[slot] ?? 0;
    }
    const armed: Armed = { signal, startedAt, limitMs: taskTimeoutMs(task) + BACKSTOP_GRACE_MS, fired: false };
    this.#armed.add(armed);
    this.#sweep ??= setInterval(() => this.#check(), SWEEP_MS).unref();
    if (caller?.aborted === true) signal.abort(caller.reason);
    const unwatch = caller === undefined || caller.aborted ? undefined : onAbort(caller, () => signal.abort(caller.reason));
    return {
      signal,
      clock,
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
