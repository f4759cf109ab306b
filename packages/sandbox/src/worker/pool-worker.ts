// The Piscina task file: each worker thread keeps its own isolates and answers
// every task with an outcome, never a throw (a throw would read as a crash).
import { IsolateRunner } from '../isolate/isolate-runner.js';
import type { IsolateOwner } from '../isolate/isolate-slots.js';
import { BroadcastChannel, workerData, type MessagePort } from 'node:worker_threads';
import type { CapabilityHandler, CapabilityReply, Fault, PoolTask, SandboxOutcome } from './worker-protocol.js';
import { NO_USAGE, NOT_DISPATCHED, OWN_CLOCK_CANCEL_OFFSET } from './worker-protocol.js';
import { PendingRequests } from '../rpc/pending-requests.js';
import { QueueReader } from '../host/queue-gauge.js';
import { shareContextLock } from '../isolate/context-lock.js';
import { HeapCollector } from './heap-collector.js';
import { MemoryGuard } from './memory-guard.js';
import { PluginSourceCache } from './plugin-source-cache.js';
import { BLAME_FILE_ENV } from '../host/child-protocol.js';
import { writeFileSync } from 'node:fs';

/** The pool's shared start clocks and queue gauge (InProcessHost passes them as workerData). */
const shared = workerData as { clocks?: SharedArrayBuffer; cancels?: SharedArrayBuffer; queue?: SharedArrayBuffer; zombies?: string; contextLock?: SharedArrayBuffer; memoryCeilingMb?: number } | undefined;
const clockSlots = shared?.clocks === undefined ? undefined : new Float64Array(shared.clocks);
const cancelSlots = shared?.cancels === undefined ? undefined : new Int32Array(shared.cancels);
const queue = shared?.queue === undefined ? undefined : new QueueReader(shared.queue);
// Only in a sandbox process of our own (the pool's host shares the lock): this flips a V8 flag for the whole process.
if (shared?.contextLock !== undefined) shareContextLock(shared.contextLock);
const collector = shared?.contextLock === undefined ? undefined : HeapCollector.borrow();
// Zombie isolates go to the pool's host on a channel it named (see InProcessHost).
const zombies = shared?.zombies === undefined ? undefined : new BroadcastChannel(shared.zombies);
zombies?.unref();
const runner = new IsolateRunner({
  // Without a gauge (a pool not made by InProcessHost) nothing is ever built ahead.
  nothingQueued: () => queue?.nothingQueued() ?? false,
  zombie: (pair) => zombies?.postMessage(pair),
  killedSettled: (pair) => zombies?.postMessage({ ...pair, settled: true }),
  // A file is the one report that outlives an abort: the parent reads it when the process
  // is gone and strikes this pair alone (host/child-process-host.ts). In a sandbox process
  // of our own the catastrophe is contained instead: isolated-vm has stopped the isolate's
  // thread, and the parent, told as of a zombie, strikes the pair and retires this process,
  // so the neighbours' calls in flight finish rather than die in an abort.
  catastrophe: (owner) => {
    if (owner === undefined) return false;
    nameCulprit(owner);
    // Only in a sandbox process of our own (the context lock is shared only there): an
    // embedder's process has nobody to retire it.
    if (zombies === undefined || shared?.contextLock === undefined) return false;
    zombies.postMessage({ tenant: owner.tenant, plugin: owner.plugin });
    return true;
  },
});

const sources = new PluginSourceCache();

// Only in a sandbox process of our own, which its parent kills at this ceiling.
const memoryGuard = shared?.memoryCeilingMb === undefined ? undefined : new MemoryGuard(runner, shared.memoryCeilingMb);

function nameCulprit(owner: IsolateOwner): void {
  const file = process.env[BLAME_FILE_ENV];
  if (file !== undefined && file !== '') writeFileSync(file, JSON.stringify(owner), { mode: 0o600 });
}

/** Tells the host's backstop the task started (host/task-backstop.ts). */
function stampStart(clock: PoolTask['clock']): void {
  queue?.started();
  if (typeof clock === 'number') {
    if (clockSlots !== undefined) clockSlots[clock] = Date.now();
  } else new Float64Array(clock)[0] = Date.now();
}

/** Capability calls of one task go out on its own port; every unanswered one fails at the end. */
function overPort(port: MessagePort): { handler: CapabilityHandler; close: () => void } {
  const waiting = new PendingRequests<string>();
  port.on('message', (reply: CapabilityReply) => {
    if (reply.ok) waiting.resolve(reply.id, reply.json);
    else waiting.fail(reply.id, 'capability failed');
  });
  return {
    handler: (name, json) =>
      waiting.request(undefined, (id) => {
        port.postMessage({ id, name, json });
        return true;
      }),
    close: () => {
      waiting.close('the call ended');
      port.close();
    },
  };
}

/** Whether the task's caller cancelled it (host/task-backstop.ts): read by the watchdog on every sweep. */
function cancelFlag(clock: PoolTask['clock']): () => boolean {
  if (typeof clock === 'number') return () => cancelSlots !== undefined && Atomics.load(cancelSlots, clock) === 1;
  const flag = new Int32Array(clock, OWN_CLOCK_CANCEL_OFFSET, 1);
  return () => Atomics.load(flag, 0) === 1;
}

export default async function runSandboxTask({ task: sent, capabilityPort, clock, source }: PoolTask): Promise<SandboxOutcome> {
  stampStart(clock);
  const cancelled = cancelFlag(clock);
  // Cancelled while it was on its way here: none of its code ran.
  if (cancelled()) return NOT_DISPATCHED;
  const task = sources.restore(sent, source);
  if (task.kind === 'call' && task.fault !== undefined) injectFault(task.fault, { tenant: task.tenant, plugin: task.plugin.name });
  const bridge = capabilityPort === undefined ? undefined : overPort(capabilityPort);
  try {
    return await runner.run(task, bridge?.handler, cancelled);
  } catch (error) {
    return { ok: false, code: 'SANDBOX_CRASH', message: `the sandbox worker failed (${error instanceof Error ? error.message : 'unknown'})`, usage: NO_USAGE };
  } finally {
    bridge?.close();
    collector?.afterTask();
    memoryGuard?.afterTask();
  }
}

/** Testing only (SandboxOptions.faults): the failures a real deployment meets, on demand. */
function injectFault(fault: Fault, owner: IsolateOwner): void {
  if (fault === 'kill-worker') process.exit(70); // in a worker thread this ends the thread only
  if (fault === 'kill-process') process.kill(process.pid, 'SIGKILL');
  if (fault === 'fail-isolate') runner.failNextIsolate();
  if (fault === 'hang-worker') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  if (fault === 'catastrophe') {
    nameCulprit(owner);
    process.kill(process.pid, 'SIGABRT'); // process.abort() ends only a worker thread
  }
}
