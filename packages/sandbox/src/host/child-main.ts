// Entry of a sandbox child process: a Piscina pool of isolate workers, driven over
// IPC. If the parent goes away, so does this process.
import { NO_USAGE } from '../worker/worker-protocol.js';
import type { SandboxTask } from '../worker/worker-protocol.js';
import type { FromChild, ToChild } from './child-protocol.js';
import { THREADS_ENV } from './child-protocol.js';
import { InProcessHost } from './in-process-host.js';

const threads = Number(process.env[THREADS_ENV]);
const host = new InProcessHost(Number.isInteger(threads) && threads > 0 ? { threads } : {});
const running = new Map<number, AbortController>();
const sources = new Map<string, string>();
const capabilityWaiters = new Map<number, { resolve: (json: string) => void; reject: (error: Error) => void }>();
let nextRequest = 1;

/** Capability calls of task `id` are relayed to the parent, where the embedder's functions live. */
function askParent(id: number): (name: string, json: string) => Promise<string> {
  return (name, json) =>
    new Promise((resolve, reject) => {
      const requestId = nextRequest;
      nextRequest += 1;
      capabilityWaiters.set(requestId, { resolve, reject });
      send({ type: 'capability', id, requestId, name, json });
    });
}

/** Puts back the module source the parent sent once, ahead of the task. */
function withSource(task: SandboxTask): SandboxTask | undefined {
  if (task.kind === 'ping') return task;
  const source = sources.get(task.plugin.key);
  return source === undefined ? undefined : { ...task, plugin: { ...task.plugin, source } };
}

function send(message: FromChild): void {
  if (process.connected) process.send?.(message);
}

process.on('message', (message: ToChild) => {
  if (message.type === 'plugin') {
    sources.set(message.key, message.source);
    return;
  }
  if (message.type === 'cancel') {
    running.get(message.id)?.abort();
    return;
  }
  if (message.type === 'capability-reply') {
    const waiter = capabilityWaiters.get(message.requestId);
    capabilityWaiters.delete(message.requestId);
    if (message.ok && typeof message.json === 'string') waiter?.resolve(message.json);
    else waiter?.reject(new Error('capability failed'));
    return;
  }
  const task = withSource(message.task);
  if (task === undefined) {
    send({ type: 'result', id: message.id, outcome: { ok: false, code: 'SANDBOX_CRASH', message: 'the sandbox process does not know this plugin', usage: NO_USAGE } });
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  host
    .run(task, controller.signal, askParent(message.id))
    .catch(() => ({ ok: false as const, code: 'SANDBOX_CRASH' as const, message: 'the sandbox pool failed', usage: NO_USAGE }))
    .then((outcome) => {
      running.delete(message.id);
      send({ type: 'result', id: message.id, outcome });
      if (host.stuckWorkers() > 0) send({ type: 'retire' });
    });
});

// The parent is gone: nobody is waiting for results, so stop at once, without teardown.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

send({ type: 'ready' });
