// The CPU and wall-clock budget of each kind of task, decided in one place: the worker's
// watchdog enforces it, and the host's backstop (task-backstop.ts) waits for it plus a grace.
import type { SandboxTask } from '../worker/worker-protocol.js';
import type { Budget } from './watchdog.js';

/** Classifiers run under a tight budget: anything slower just means exclusive. */
const CLASSIFY_BUDGET: Budget = Object.freeze({ cpuMs: 50, timeoutMs: 250 });
/** Describing loads a module once, at load time: its manifest's budget, up to these caps. */
const DESCRIBE_BUDGET_CAP: Budget = Object.freeze({ cpuMs: 2000, timeoutMs: 5000 });
const NO_BUDGET: Budget = Object.freeze({ cpuMs: 0, timeoutMs: 0 });

export function taskBudget(task: SandboxTask): Budget {
  switch (task.kind) {
    case 'call':
      return task.plugin.limits;
    case 'classify':
      return CLASSIFY_BUDGET;
    case 'describe':
      return { cpuMs: Math.min(task.plugin.limits.cpuMs * 2, DESCRIBE_BUDGET_CAP.cpuMs), timeoutMs: Math.min(task.plugin.limits.timeoutMs, DESCRIBE_BUDGET_CAP.timeoutMs) };
    case 'ping':
      return NO_BUDGET;
  }
}
