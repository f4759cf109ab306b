// The Piscina task file: each worker thread keeps its own isolates and answers
// every task with an outcome, never a throw (a throw would read as a crash).
import { IsolateRunner } from '../isolate/isolate-runner.js';
import type { SandboxOutcome, SandboxTask } from '../isolate/protocol.js';
import { NO_USAGE } from '../isolate/protocol.js';

const runner = new IsolateRunner();

export default async function runSandboxTask(task: SandboxTask): Promise<SandboxOutcome> {
  if (task.kind === 'call' && task.fault !== undefined) injectFault(task.fault);
  try {
    return await runner.run(task);
  } catch (error) {
    return { ok: false, code: 'SANDBOX_CRASH', message: `the sandbox worker failed (${error instanceof Error ? error.message : 'unknown'})`, usage: NO_USAGE };
  }
}

/** Testing only (SandboxOptions.faults): the failures a real deployment meets, on demand. */
function injectFault(fault: 'kill-worker' | 'kill-process' | 'fail-isolate'): void {
  if (fault === 'kill-worker') process.exit(70); // in a worker thread this ends the thread only
  if (fault === 'kill-process') process.kill(process.pid, 'SIGKILL');
  if (fault === 'fail-isolate') runner.failNextIsolate();
}
