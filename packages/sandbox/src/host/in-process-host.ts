// A Piscina pool of isolate workers inside this process. isolated-vm needs
// --no-node-snapshot on Node 20+, so this refuses to start without it.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { SandboxError } from '../errors/sandbox-error.js';
import { NO_USAGE, type SandboxOutcome, type SandboxTask } from '../isolate/protocol.js';
import type { PoolOptions, SandboxHost } from './sandbox-host.js';

const WORKER_FILE = new URL('../worker/pool-worker.js', import.meta.url).href;

export function hasSnapshotFlag(): boolean {
  return process.execArgv.includes('--no-node-snapshot') || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes('--no-node-snapshot');
}

export function assertSnapshotFlag(): void {
  if (!hasSnapshotFlag()) {
    throw new SandboxError(
      'SNAPSHOT_FLAG_MISSING',
      'isolated-vm needs Node to run with --no-node-snapshot (Node 20+); start node with that flag, or use the default process mode, which sets it for you',
    );
  }
}

export class InProcessHost implements SandboxHost {
  readonly #pool: Piscina<SandboxTask, SandboxOutcome>;
  #closed = false;

  constructor(options: PoolOptions = {}) {
    assertSnapshotFlag();
    const threads = options.threads ?? Math.max(2, availableParallelism());
    this.#pool = new Piscina<SandboxTask, SandboxOutcome>({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
      // One task per worker at a time: an isolate's CPU accounting then belongs to one call.
      concurrentTasksPerWorker: 1,
    });
  }

  async run(task: SandboxTask, signal?: AbortSignal): Promise<SandboxOutcome> {
    if (this.#closed) return { ok: false, code: 'SANDBOX_CRASH', message: 'the sandbox is closed', usage: NO_USAGE };
    try {
      return await this.#pool.run(task, signal === undefined ? {} : { signal });
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') {
        // Piscina terminates the worker running an aborted task: its isolates go with it.
        return { ok: false, code: 'ABORTED', message: 'cancelled while running', usage: NO_USAGE };
      }
      return { ok: false, code: 'SANDBOX_CRASH', message: 'the sandbox worker died during the call', usage: NO_USAGE };
    }
  }

  processIds(): number[] {
    return [process.pid];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.destroy();
  }
}
