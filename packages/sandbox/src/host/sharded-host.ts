// Several supervised sandbox processes (shards), each tenant placed on one by a stable
// hash: a process abort costs only the calls in flight in its own shard. Crashes are
// reported to the quarantine, which refuses a repeat offender's calls before they reach
// any process.
import { NO_USAGE, type CapabilityHandler, type SandboxOutcome, type SandboxTask } from '../isolate/protocol.js';
import { ChildProcessHost, type ChildProcessOptions } from './child-process-host.js';
import type { CrashQuarantine } from './crash-quarantine.js';
import type { SandboxHost } from './sandbox-host.js';
import { shardOf } from './shard-placement.js';

export interface ShardedHostOptions extends Omit<ChildProcessOptions, 'onCrash'> {
  readonly processes: number;
  readonly quarantine: CrashQuarantine;
  /** Work no tenant owns (loading a plugin) runs in this tenant's shard. */
  readonly loaderTenant: string;
}

export class ShardedHost implements SandboxHost {
  readonly #shards: ChildProcessHost[];
  readonly #quarantine: CrashQuarantine;
  readonly #loaderTenant: string;

  constructor(options: ShardedHostOptions) {
    const { processes, quarantine, loaderTenant, ...child } = options;
    this.#quarantine = quarantine;
    this.#loaderTenant = loaderTenant;
    this.#shards = Array.from({ length: processes }, () => new ChildProcessHost({ ...child, onCrash: (inFlight) => quarantine.recordCrash(inFlight) }));
  }

  run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    const tenant = task.kind === 'call' || task.kind === 'classify' ? task.tenant : this.#loaderTenant;
    if (task.kind === 'call' || task.kind === 'classify') {
      const refusal = this.#quarantine.refusal(task.tenant, task.plugin.name);
      if (refusal !== undefined) return Promise.resolve({ ok: false, code: 'SANDBOX_CRASH', message: refusal, usage: NO_USAGE });
    }
    return (this.#shards[shardOf(tenant, this.#shards.length)] as ChildProcessHost).run(task, signal, capabilities);
  }

  processIds(): number[] {
    return this.#shards.flatMap((shard) => shard.processIds());
  }

  async close(): Promise<void> {
    await Promise.all(this.#shards.map((shard) => shard.close()));
  }
}
