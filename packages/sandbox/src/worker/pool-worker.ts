// The Piscina task file: each worker thread keeps its own isolates and answers
// every task with an outcome, never a throw (a throw would read as a crash).
import { IsolateRunner } from '../isolate/isolate-runner.js';
import type { MessagePort } from 'node:worker_threads';
import type { CapabilityHandler, CapabilityReply, Fault, PoolTask, SandboxOutcome } from './worker-protocol.js';
import { NO_USAGE } from './worker-protocol.js';

const runner = new IsolateRunner();

/** Capability calls of one task go out on its own port; every unanswered one fails at the end. */
function overPort(port: MessagePort): { handler: CapabilityHandler; close: () => void } {
  let next = 1;
  const waiting = new Map<number, { resolve: (json: string) => void; reject: (error: Error) => void }>();
  port.on('message', (reply: CapabilityReply) => {
    const waiter = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.json);
    else waiter?.reject(new Error('capability failed'));
  });
  return {
    handler: (name, json) =>
      new Promise((resolve, reject) => {
        const id = next;
        next += 1;
        waiting.set(id, { resolve, reject });
        port.postMessage({ id, name, json });
      }),
    close: () => {
      for (const waiter of waiting.values()) waiter.reject(new Error('the call ended'));
      port.close();
    },
  };
}

export default async function runSandboxTask({ task, capabilityPort, started }: PoolTask): Promise<SandboxOutcome> {
  new Float64Array(started)[0] = Date.now();
  if (task.kind === 'call' && task.fault !== undefined) injectFault(task.fault);
  const bridge = capabilityPort === undefined ? undefined : overPort(capabilityPort);
  try {
    return await runner.run(task, bridge?.handler);
  } catch (error) {
    return { ok: false, code: 'SANDBOX_CRASH', message: `the sandbox worker failed (${error instanceof Error ? error.message : 'unknown'})`, usage: NO_USAGE };
  } finally {
    bridge?.close();
  }
}

/** Testing only (SandboxOptions.faults): the failures a real deployment meets, on demand. */
function injectFault(fault: Fault): void {
  if (fault === 'kill-worker') process.exit(70); // in a worker thread this ends the thread only
  if (fault === 'kill-process') process.kill(process.pid, 'SIGKILL');
  if (fault === 'fail-isolate') runner.failNextIsolate();
  if (fault === 'hang-worker') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
