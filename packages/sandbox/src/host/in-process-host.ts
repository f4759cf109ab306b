// A Piscina pool of isolate workers inside this process. isolated-vm needs
// --no-node-snapshot on Node 20+: the embedder's process is checked before one is made here
// (host/snapshot-flag.ts); a sandbox process of our own always has it.
import { availableParallelism } from 'node:os';
import { Piscina, queueOptionsSymbol } from 'piscina';
import { BroadcastChannel, MessageChannel } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import { NO_USAGE, NOT_DISPATCHED, type PluginSpec, type CapabilityHandler, type CapabilityReply, type CapabilityRequest, type PoolTask, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import type { PoolOptions, SandboxHost } from './sandbox-host.js';
import { TaskBackstop, type DispatchMark } from './task-backstop.js';
import type { WatchAbort } from '../rpc/watch-abort.js';
import { QueueGauge } from './queue-gauge.js';
import { SharedPluginSources } from './shared-plugin-sources.js';
import { CONTEXT_LOCK_BYTES } from '../isolate/context-lock.js';
import { affinityKey, WorkerAffinity } from './worker-affinity.js';

const WORKER_FILE = new URL('../worker/pool-worker.js', import.meta.url).href;

export interface InProcessHostOptions extends PoolOptions {
  /** A worker killed a call's isolate that went on running past ZOMBIE_MS (isolate/isolate-runner.ts): whose it was. */
  readonly onZombie?: (pair: { readonly tenant: string; readonly plugin: string }) => void;
  /** Every task of an isolate a worker killed has stopped (its call was answered `stillRunning`): whose it was. */
  readonly onKilledSettled?: (pair: { readonly tenant: string; readonly plugin: string }) => void;
  /**
   * This process is a sandbox process of our own: its workers may flip a V8 flag for the
   * whole process to borrow `gc` (worker/heap-collector.ts). Never in an embedder's process.
   */
  readonly ownProcess?: boolean;
  /**
   * The resident-memory ceiling this process is killed at (a sandbox process of our own):
   * its workers dispose idle tenant isolates holding memory before it is reached.
   */
  readonly memoryCeilingMb?: number;
  /** How a caller's cancel is watched: core's onAbort in the embedder's process, a listener of its own per task in ours (rpc/watch-abort.ts). */
  readonly watchAbort: WatchAbort;
}

const DISPOSAL_SETTLE_MS = 250;
/** Time for a build-ahead step already running in a worker to finish before the pool is destroyed. */
const BUILD_AHEAD_SETTLE_MS = 50;
/** Each pool worker's own V8 heap (its isolates' heaps are separate, bounded by memoryMb). */
const WORKER_HEAP_MB = 256;

/** What the pool's balancer reads of a queued task (Piscina hands it over under queueOptionsSymbol, never to the worker). */
interface Routing {
  /** Marked once a worker is chosen: a cancel after that never goes through Piscina. */
  readonly dispatch: DispatchMark;
  /** Whose isolate it runs in (worker-affinity.ts). */
  readonly affinity: string | undefined;
}

/** Outcomes that mean an isolate was disposed under a call. */
const KILLS: ReadonlySet<string> = new Set(['CPU_LIMIT', 'TIMEOUT', 'MEMORY_LIMIT', 'SANDBOX_CRASH', 'ABORTED']);

export class InProcessHost implements SandboxHost {
  readonly #pool: Piscina<PoolTask, SandboxOutcome>;
  readonly #backstop: TaskBackstop;
  readonly #queue = new QueueGauge();
  readonly #sources = new SharedPluginSources();
  readonly #affinity = new WorkerAffinity();
  /** Workers report zombie isolates here (a channel of this pool's own, by a random name). */
  readonly #zombies: BroadcastChannel | undefined;
  #closed = false;
  #lastKillAt = 0;
  #stuckWorkers = 0;

  constructor(options: InProcessHostOptions) {
    this.#backstop = new TaskBackstop(options.watchAbort);
    const zombieChannel = options.onZombie === undefined ? undefined : `airlock-zombies-${randomUUID()}`;
    if (options.onZombie !== undefined && zombieChannel !== undefined) {
      const onZombie = options.onZombie;
      this.#zombies = new BroadcastChannel(zombieChannel);
      this.#zombies.unref();
      this.#zombies.onmessage = (event) => {
        const pair = (event as MessageEvent).data as { tenant?: unknown; plugin?: unknown; settled?: unknown };
        if (typeof pair.tenant !== 'string' || typeof pair.plugin !== 'string') return;
        if (pair.settled === true) options.onKilledSettled?.({ tenant: pair.tenant, plugin: pair.plugin });
        else onZombie({ tenant: pair.tenant, plugin: pair.plugin });
      };
    }
    const threads = options.threads ?? Math.max(2, availableParallelism());
    this.#pool = new Piscina<PoolTask, SandboxOutcome>({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
      // One task per worker at a time: an isolate's CPU accounting then belongs to one call.
      concurrentTasksPerWorker: 1,
      // isolated-vm settles work (disposals, releases) on the owning thread's event loop;
      // a worker parked in Atomics.wait between tasks would starve it and abort at teardown.
      atomics: 'disabled',
      // Per-task run and wait histograms nobody reads: a cost on every call.
      recordTiming: false,
      // A worker's own heap holds what crosses from isolates (results, capability payloads,
      // errors a plugin left behind, up to an isolate's whole limit each). Bounded, V8
      // collects that garbage long before the process's memory ceiling; a worker that still
      // outgrows it dies alone (its call is SANDBOX_CRASH, pinned on it), not the process.
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      // One task per worker, to an idle one only: the first idle worker, or with more tenants in
      // play than a worker keeps isolates for, the one that ran the tenant's last task if it is
      // idle (worker-affinity.ts). Choosing also marks the task handed over: a cancel after
      // that never goes through Piscina.
      loadBalancer: (task, workers) => {
        const routing = (task as unknown as Record<symbol, unknown>)[queueOptionsSymbol] as Routing | null | undefined;
        const worker = this.#affinity.choose(routing?.affinity, workers) ?? null;
        if (worker !== null && routing !== null && routing !== undefined) routing.dispatch.dispatched = true;
        return worker;
      },
      workerData: { clocks: this.#backstop.clocks, cancels: this.#backstop.cancels, queue: this.#queue.buffer, ...(zombieChannel === undefined ? {} : { zombies: zombieChannel }), ...(options.ownProcess === true ? { contextLock: new SharedArrayBuffer(CONTEXT_LOCK_BYTES) } : {}), ...(options.memoryCeilingMb === undefined ? {} : { memoryCeilingMb: options.memoryCeilingMb }) },
    });
  }

  async run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    if (this.#closed) return { ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: 'the sandbox is closed: the call was not run', usage: NO_USAGE };
    // A call of a plugin granted capabilities gets a port to ask on, answered here.
    const channel = task.kind === 'call' && task.plugin.capabilities.length > 0 && capabilities !== undefined ? new MessageChannel() : undefined;
    if (channel !== undefined && capabilities !== undefined) {
      // Once the task is cancelled nothing more reaches its plugin, whoever answers (the
      // embedder's handler withholds its own; a sandbox process's parent or a remote host may
      // still send a refusal): the plugin waits where it is until its isolate is stopped
      // (ABORTED) instead of going on with an answer that raced the cancel.
      const answer = (reply: CapabilityReply): void => {
        if (signal?.aborted !== true) channel.port1.postMessage(reply);
      };
      channel.port1.on('message', (request: CapabilityRequest) => {
        if (signal?.aborted === true) return;
        capabilities(request.name, request.json).then(
          (json) => answer({ id: request.id, ok: true, json }),
          () => answer({ id: request.id, ok: false }),
        );
      });
    }
    const backstop = this.#backstop.arm(task, signal);
    this.#queue.submitted();
    try {
      const shared = this.#sources.share(task);
      const poolTask: PoolTask = { ...shared, clock: backstop.clock, ...(channel === undefined ? {} : { capabilityPort: channel.port2 }) };
      // Symbol-keyed: Piscina hands it to the balancer and never clones it to the worker.
      const routing: Routing = { dispatch: backstop.dispatch, affinity: affinityKey(task) };
      (poolTask as unknown as Record<symbol, unknown>)[queueOptionsSymbol] = routing;
      const outcome = await this.#pool.run(poolTask, { signal: backstop.signal, ...(channel === undefined ? {} : { transferList: [channel.port2] }) });
      if (!outcome.ok && KILLS.has(outcome.code)) this.#lastKillAt = performance.now();
      return outcome;
    } catch (error) {
      this.#lastKillAt = performance.now();
      if (backstop.fired()) {
        // Piscina replaces the worker; a thread that cannot even be terminated stays behind,
        // so this process should be retired by whoever supervises it.
        this.#stuckWorkers += 1;
        return { ok: false, code: 'TIMEOUT', message: 'did not finish within its deadline, and its sandbox worker stopped answering (replaced)', usage: NO_USAGE };
      }
      if (error instanceof Error && error.name === 'AbortError') {
        // Still queued (no worker stamped it): Piscina just dropped it, and none of its code ran.
        if (!backstop.started()) return NOT_DISPATCHED;
        // Piscina terminates the worker running an aborted task: its isolates go with it.
        return { ok: false, code: 'ABORTED', message: 'cancelled while running', usage: NO_USAGE };
      }
      return { ok: false, code: 'SANDBOX_CRASH', message: 'the sandbox worker died during the call', usage: NO_USAGE };
    } finally {
      if (!backstop.started()) this.#queue.dropped();
      backstop.stop();
      channel?.port1.close();
    }
  }

  /** A plugin spec whose source this pool keeps as shared bytes only (host/shared-plugin-sources.ts). */
  holdSource(spec: PluginSpec): PluginSpec {
    return this.#sources.hold(spec);
  }

  processIds(): number[] {
    return [process.pid];
  }

  /** Workers given up on by the backstop: a process with any should be replaced when it can be. */
  stuckWorkers(): number {
    return this.#stuckWorkers;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#zombies?.close();
    // No worker starts building ahead from now on, and one that is building (a few
    // milliseconds of synchronous isolated-vm work) gets to finish: a worker terminated in the
    // middle of an isolated-vm call can abort the process (seen on Node 26).
    this.#queue.closing();
    // isolated-vm finishes disposing a killed isolate asynchronously; terminating its
    // worker before then can abort the process, so recent kills get time to settle.
    const settleMs = Math.max(BUILD_AHEAD_SETTLE_MS, DISPOSAL_SETTLE_MS - (performance.now() - this.#lastKillAt));
    if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    await this.#pool.destroy();
  }
}
