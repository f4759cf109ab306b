// Entry of a sandbox child process: a Piscina pool of isolate workers, driven over
// IPC. If the parent goes away, so does this process.
import { NO_USAGE } from '../worker/worker-protocol.js';
import type { PluginSpec, SandboxTask } from '../worker/worker-protocol.js';
import type { FromChild, ToChild, WireTask } from './child-protocol.js';
import { CEILING_ENV, THREADS_ENV } from './child-protocol.js';
import { InProcessHost } from './in-process-host.js';
import { PendingRequests } from '../rpc/pending-requests.js';
import { watchOwnSignal } from '../rpc/watch-abort.js';
import { MessageOutbox, unbatch, type Batch } from './message-outbox.js';

const threads = Number(process.env[THREADS_ENV]);
const ceilingMb = Number(process.env[CEILING_ENV]);
// A zombie (an isolate killed for CPU or time that goes on running) uses CPU no call pays for
// and may abort this process when it ends: the parent strikes its pair and retires us.
const host = new InProcessHost({ ...(Number.isInteger(threads) && threads > 0 ? { threads } : {}), onZombie: (pair) => send({ type: 'zombie', ...pair }), onKilledSettled: (pair) => send({ type: 'killed-settled', ...pair }), ownProcess: true, watchAbort: watchOwnSignal, ...(Number.isFinite(ceilingMb) && ceilingMb > 0 ? { memoryCeilingMb: ceilingMb } : {}) });
/** Each running task: how to cancel it, and the capability requests it has sent the parent. */
const running = new Map<number, { readonly controller: AbortController; readonly requests: PendingRequests<string> | undefined }>();
/** Plugin specs by key, as the parent sent them once. */
const specs = new Map<string, PluginSpec>();

/** Capability calls of task `id` are relayed to the parent, where the embedder's functions live. */
function askParent(id: number, requests: PendingRequests<string>): (name: string, json: string) => Promise<string> {
  return (name, json) => requests.request(undefined, (requestId) => send({ type: 'capability', id, requestId, name, json }));
}

/** Puts back the plugin spec the parent sent once, ahead of the task. */
function withSpec(task: WireTask): SandboxTask | undefined {
  if (task.kind === 'ping') return task;
  const spec = specs.get(task.plugin);
  return spec === undefined ? undefined : ({ ...task, plugin: spec } as SandboxTask);
}

/** Answers that finish in one event-loop turn go to the parent in one message. */
const outbox = new MessageOutbox<FromChild>(
  (message) => {
    if (!process.connected || process.send === undefined) return false;
    process.send(message);
    return true;
  },
  () => process.connected && process.send !== undefined,
);

function send(message: FromChild): boolean {
  return outbox.send(message);
}

process.on('message', (wire: ToChild | Batch<ToChild>) => {
  for (const message of unbatch(wire)) receive(message);
});

function receive(message: ToChild): void {
  if (message.type === 'plugin') {
    // Its source kept once, as the bytes the pool's workers read (not also as a string).
    specs.set(message.spec.key, host.holdSource(message.spec));
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
  const task = withSpec(message.task);
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
      // Retire first: the parent must take no new call here before it learns of this answer.
      if (host.stuckWorkers() > 0) send({ type: 'retire' });
      send({ type: 'result', id: message.id, outcome });
      // A worker died under this call and this process may abort next: the parent must learn
      // whose call it was before then, not at the end of the turn.
      if (!outcome.ok && outcome.code === 'SANDBOX_CRASH') outbox.flush();
    });
}

// The parent is gone: nobody is waiting for results, so stop at once, without teardown.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
// A Ctrl-C at a terminal reaches this process too (it shares the parent's process group):
// the parent decides what it cancels, and this process goes when the parent does. Killed by
// it, every call in flight here would end as SANDBOX_CRASH, struck against its tenant.
process.on('SIGINT', () => undefined);

send({ type: 'ready' });
