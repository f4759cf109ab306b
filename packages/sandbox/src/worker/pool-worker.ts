// The Piscina task file: each worker thread keeps its own isolates and answers
// every task with an outcome, never a throw (a throw would read as a crash).
import { IsolateRunner } from '../isolate/isolate-runner.js';
import type { SandboxOutcome, SandboxTask } from '../isolate/protocol.js';
import { NO_USAGE } from '../isolate/protocol.js';

const runner = new IsolateRunner();

export default async function runSandboxTask(task: SandboxTask): Promise<SandboxOutcome> {
  try {
    return await runner.run(task);
  } catch (error) {
    return { ok: false, code: 'SANDBOX_CRASH', message: `the sandbox worker failed (${error instanceof Error ? error.message : 'unknown'})`, usage: NO_USAGE };
  }
}
