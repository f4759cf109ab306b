// The CPU and wall-clock budget of each kind of task, decided in one place: the worker's
// watchdog enforces it, and the host's backstop (task-backstop.ts) waits for it plus a grace.
import type { SandboxTask } from '../worker/worker-protocol.js';
import type { Budget } from './watchdog.js';

/** Classifiers run under a tight budget: anything slower just means exclusive. */
const CLASSIFY_BUDGET: Budget = Object.freeze({ cpuMs: 50, timeoutMs: 250 });
/**
 * Describing loads a module once, at load time: its manifest's budget, up to these caps, and
 * never less wall time than DESCRIBE_MIN_TIMEOUT_MS. A top level runs synchronously, so its CPU
 * budget is what stops a spin; the wall clock only adds a new isolate's start, which on a
 * crowded machine once took a plugin with timeoutMs 150 past its deadline (the bench's own).
 */
const DESCRIBE_BUDGET_CAP: Budget = Object.freeze({ cpuMs: 2000, timeoutMs: 5000 });
const DESCRIBE_MIN_TIMEOUT_MS = 1000;
const NO_BUDGET: Budget = Object.freeze({ cpuMs: 0, timeoutMs: 0 });

export function taskBudget(task: SandboxTask): Budget {
  switch (task.kind) {
    case 'call':
      return task.plugin.limits;
    case 'classify':
      return CLASSIFY_BUDGET;
    case 'describe':
      return { cpuMs: Math.min(task.plugin.limits.cpuMs * 2, DESCRIBE_BUDGET_CAP.cpuMs), timeoutMs: Math.max(DESCRIBE_MIN_TIMEOUT_MS, Math.min(task.plugin.limits.timeoutMs, DESCRIBE_BUDGET_CAP.timeoutMs)) };
    case 'ping':
      return NO_BUDGET;
  }
}
