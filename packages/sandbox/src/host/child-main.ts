// Entry of a sandbox child process: a Piscina pool of isolate workers, driven over
// IPC. If the parent goes away, so does this process.
import { NO_USAGE } from '../worker/worker-protocol.js';
import type { SandboxTask } from '../worker/worker-protocol.js';
import type { FromChild, ToChild } from './child-protocol.js';
import { THREADS_ENV } from './child-protocol.js';
import { InProcessHost } from './in-process-host.js';
import { PendingRequests } from '../rpc/pending-requests.js';

const threads = Number(process.env[THREADS_ENV]);
const host = new InProcessHost(Number.isInteger(threads) && threads > 0 ? { threads } : {});
/** Each running task: how to cancel it, and the capability requests it has sent the parent. */
const running = new Map<number, { readonly controller: AbortController; readonly requests: PendingRequests<string> | undefined }>();
const sources = new Map<string, string>();

/** Capability calls of task `id` are relayed to the parent, where the embedder's functions live. */
function askParent(id: number, requests: PendingRequests<string>): (name: string, json: string) => Promise<string> {
  return (name, json) => requests.request(undefined, (requestId) => send({ type: 'capability', id, requestId, name, json }));
}

/** Puts back the module source the parent sent once, ahead of the task. */
function withSource(task: SandboxTask): SandboxTask | undefined {
  if (task.kind === 'ping') return task;
  const source = sources.get(task.plugin.key);
  return source === undefined ? undefined : { ...task, plugin: { ...task.plugin, source } };
}

function send(message: FromChild): boolean {
  if (!process.connected || process.send === undefined) return false;
  process.send(message);
  return true;
}

process.on('message', (message: ToChild) => {
  if (message.type === 'plugin') {
    sources.set(message.key, message.source);
    return;
  }
  if (message.type === 'cancel') {
    running.get(message.id)?.controller.abort();
    return;
  }
  if (message.type === 'capability-reply') {
    const requests = running.get(message.id)?.requests;
    if (message.ok && typeof message.json === 'string') requests?.resolve(message.requestId, message.json);
    else requests?.fail(message.requestId, 'capability failed');
    return;
  }
  const task = withSource(message.task);
  if (task === undefined) {
    send({ type: 'result', id: message.id, outcome: { ok: false, code: 'SANDBOX_CRASH', message: 'the sandbox process does not know this plugin', usage: NO_USAGE } });
    return;
  }
  const controller = new AbortController();
  // Only calls of a plugin granted capabilities can ask for any.
  const requests = task.kind === 'call' && task.plugin.capabilities.length > 0 ? new PendingRequests<string>() : undefined;
  running.set(message.id, { controller, requests });
  host
    .run(task, controller.signal, requests === undefined ? undefined : askParent(message.id, requests))
    .catch(() => ({ ok: false as const, code: 'SANDBOX_CRASH' as const, message: 'the sandbox pool failed', usage: NO_USAGE }))
    .then((outcome) => {
      running.delete(message.id);
      // A capability the parent never answers must not hold anything after its call.
      requests?.close('the call ended');
      send({ type: 'result', id: message.id, outcome });
      if (host.stuckWorkers() > 0) send({ type: 'retire' });
    });
});

// The parent is gone: nobody is waiting for results, so stop at once, without teardown.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

send({ type: 'ready' });
