// The host's last line for a worker that stops answering (a thread stuck on an isolate's
// lock, a native call that never returns): a task still unanswered its budget plus a
// grace after it *started* in a worker is aborted, which makes Piscina replace the worker,
// and its call is answered. Time spent queued for a worker is never counted.
import { onAbort } from '@airlock/core';
import type { SandboxTask } from '../worker/worker-protocol.js';

/** Beyond the task's own wall-clock budget, before the worker is given up on. */
export const BACKSTOP_GRACE_MS = 1000;
/** Budgets of the tasks that are not calls (the runner's own caps). */
const CLASSIFY_TIMEOUT_MS = 250;
const DESCRIBE_TIMEOUT_CAP_MS = 5000;

export function taskTimeoutMs(task: SandboxTask): number {
  switch (task.kind) {
    case 'call':
      return task.plugin.limits.timeoutMs;
    case 'classify':
      return CLASSIFY_TIMEOUT_MS;
    case 'describe':
      return Math.min(task.plugin.limits.timeoutMs, DESCRIBE_TIMEOUT_CAP_MS);
    case 'ping':
      return 0;
  }
}

export interface Backstop {
  /**
   * Aborts when the task overran, or when the caller's signal does: the one signal to hand
   * Piscina (no AbortSignal.any per task: this is the per-call path).
   */
  readonly signal: AbortSignal;
  /** The shared clock the worker stamps when it starts the task. */
  readonly started: SharedArrayBuffer;
  /** The task overran (as opposed to being cancelled by its caller). */
  readonly fired: () => boolean;
  stop(): void;
}

export function armBackstop(task: SandboxTask, caller: AbortSignal | undefined): Backstop {
  const controller = new AbortController();
  const started = new SharedArrayBuffer(8);
  const startedAt = new Float64Array(started);
  const limitMs = taskTimeoutMs(task) + BACKSTOP_GRACE_MS;
  let fired = false;
  let timer: ReturnType<typeof setTimeout>;
  const check = (): void => {
    const at = startedAt[0] ?? 0;
    const ranMs = at === 0 ? 0 : Date.now() - at;
    if (at !== 0 && ranMs >= limitMs) {
      fired = true;
      return controller.abort(new Error('the sandbox worker stopped answering'));
    }
    timer = setTimeout(check, at === 0 ? limitMs : limitMs - ranMs);
    timer.unref();
  };
  timer = setTimeout(check, limitMs);
  timer.unref();
  if (caller?.aborted === true) controller.abort(caller.reason);
  const unwatch = caller === undefined || caller.aborted ? undefined : onAbort(caller, () => controller.abort(caller.reason));
  return {
    signal: controller.signal,
    started,
    fired: () => fired,
    stop: () => {
      clearTimeout(timer);
      unwatch?.();
    },
  };
}
