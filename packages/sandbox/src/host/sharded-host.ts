// Several supervised sandbox processes (shards), each tenant placed on one by a stable
// hash: a process abort costs only the calls in flight in its own shard. Crash suspects
// run in a probation process of their own, one call at a time, so a suspect never again
// shares a process with other tenants' calls, and a crash there is pinned on it with
// certainty. A suspect's Code Mode programs have a probation process of their own: admitted
// from their own budget, a program beside a call in one process would share its fate and
// make its crash uncertain again. Crashes are reported to the quarantine, which refuses a repeat offender's
// calls before they reach any process.
import { NO_USAGE, type CapabilityHandler, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import { ChildProcessHost, type ChildProcessOptions } from './child-process-host.js';
import type { CrashQuarantine } from './crash-quarantine.js';
import type { SandboxHost } from './sandbox-host.js';
import { shardOf } from './shard-placement.js';

export interface ShardedHostOptions extends Omit<ChildProcessOptions, 'onCrash'> {
  readonly processes: number;
  readonly quarantine: CrashQuarantine;
  /** Work no tenant owns (loading a plugin) runs in this tenant's shard. */
  readonly loaderTenant: string;
  /** Threads of each probation process (default 1). */
  readonly probationThreads?: number;
}

export class ShardedHost implements SandboxHost {
  /** The shards, then the probation process for calls, then the one for programs. */
  readonly #hosts: ChildProcessHost[];
  readonly #quarantine: CrashQuarantine;
  readonly #loaderTenant: string;

  constructor(options: ShardedHostOptions) {
    const { processes, quarantine, loaderTenant, probationThreads, ...child } = options;
    this.#quarantine = quarantine;
    this.#loaderTenant = loaderTenant;
    const onCrash = (inFlight: Parameters<CrashQuarantine['recordCrash']>[0]): void => quarantine.recordCrash(inFlight);
    this.#hosts = [
      ...Array.from({ length: processes }, () => new ChildProcessHost({ ...child, onCrash })),
      new ChildProcessHost({ ...child, threads: probationThreads ?? 1, onCrash }),
      new ChildProcessHost({ ...child, threads: probationThreads ?? 1, onCrash }),
    ];
  }

  /** Index of the probation process among placements: where placementOf puts a suspect. */
  get probation(): number {
    return this.#hosts.length - 2;
  }

  /** Index of the probation process for Code Mode programs (their admission puts a suspect program there). */
  get programProbation(): number {
    return this.#hosts.length - 1;
  }

  /** Where a tenant+plugin's tasks run now: its shard, or probation while it is a crash suspect. */
  placementOf(tenant: string, plugin: string | undefined): number {
    if (plugin !== undefined && this.#quarantine.isSuspect(tenant, plugin)) return this.probation;
    return shardOf(tenant, this.probation);
  }

  run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler, placement?: number): Promise<SandboxOutcome> {
    const owned = task.kind === 'call' || task.kind === 'classify';
    if (owned) {
      const refusal = this.#quarantine.refusal(task.tenant, task.plugin.name);
      if (refusal !== undefined) return Promise.resolve({ ok: false, code: 'SANDBOX_CRASH', message: refusal, usage: NO_USAGE });
    }
    const where = placement ?? (owned ? this.placementOf(task.tenant, task.plugin.name) : this.placementOf(this.#loaderTenant, undefined));
    return (this.#hosts[where] as ChildProcessHost).run(task, signal, capabilities);
  }

  processIds(): number[] {
    return this.#hosts.flatMap((host) => host.processIds());
  }

  async close(): Promise<void> {
    await Promise.all(this.#hosts.map((host) => host.close()));
  }
}
