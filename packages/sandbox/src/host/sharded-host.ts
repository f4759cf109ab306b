// Several supervised sandbox processes (shards), each tenant placed on one by a stable
// hash: a process abort costs only the calls in flight in its own shard. Crash suspects
// run in probation processes (lanes), each running one call at a time, so a suspect never
// again shares a process with other calls, and a crash there is pinned on it with
// certainty. Each suspect tenant gets a lane of its own while lanes last: one lane shared by
// every suspect let a hostile suspect hold it with calls that never end (up to their
// deadline, each) while the innocent neighbours caught in the same crash waited behind it.
// A suspect's Code Mode programs have probation lanes of their own: admitted from their own
// budget, a program beside a call in one process would share its fate and make its crash
// uncertain again. Crashes are reported to the quarantine, which refuses a repeat
// offender's calls before they reach any process.
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
  /** Probation lanes (processes, started only when used) for calls, and as many for programs. Default PROBATION_LANES. */
  readonly probationLanes?: number;
  /** A lane's process exits after this long with no task (default LANE_HELD_MS); its next task starts it again. */
  readonly laneIdleMs?: number;
}

/** Fewest probation lanes: suspect tenants that each get one of their own; beyond, they share. */
export const PROBATION_LANES = 4;
/**
 * Crashes whose suspects all get lanes of their own, one suspect per call a shard can have in
 * flight: an attacker whose other plugin (or program) crashes a shard again while the first
 * crash's suspects hold every lane would otherwise get the new ones placed beside its own
 * never-ending call. Lanes cost nothing until used: a lane's process starts with its first call.
 */
const CRASHES_WITH_OWN_LANES = 4;

/** Most lanes: each may hold a sandbox process once used (about 85 MB), for calls and for programs. */
const MAX_LANES = 16;

/** How many probation lanes a sandbox with this many call threads per shard gets. */
export function probationLanes(callThreads: number): number {
  return Math.max(PROBATION_LANES, Math.min(MAX_LANES, CRASHES_WITH_OWN_LANES * callThreads));
}
/** A tenant keeps its lane this long after its last suspect call (the quarantine's default window). */
const LANE_HELD_MS = 60_000;

export class ShardedHost implements SandboxHost {
  /** The shards, then the probation lanes for calls, then those for programs. */
  readonly #hosts: ChildProcessHost[];
  readonly #quarantine: CrashQuarantine;
  readonly #loaderTenant: string;
  readonly #shards: number;
  readonly #lanes: number;
  /** Which call lane each suspect tenant was given, and when it last used it. */
  readonly #laneOf = new Map<string, { readonly lane: number; at: number }>();

  constructor(options: ShardedHostOptions) {
    const { processes, quarantine, loaderTenant, probationThreads, probationLanes, laneIdleMs, ...child } = options;
    this.#quarantine = quarantine;
    this.#loaderTenant = loaderTenant;
    this.#shards = processes;
    this.#lanes = probationLanes ?? PROBATION_LANES;
    const onCrash = (inFlight: Parameters<CrashQuarantine['recordCrash']>[0]): void => quarantine.recordCrash(inFlight);
    const lane = (): ChildProcessHost => new ChildProcessHost({ ...child, threads: probationThreads ?? 1, onCrash, idleExitMs: laneIdleMs ?? LANE_HELD_MS });
    this.#hosts = [
      ...Array.from({ length: processes }, () => new ChildProcessHost({ ...child, onCrash })),
      ...Array.from({ length: this.#lanes * 2 }, lane),
    ];
  }

  /** How many processes there are of each kind, in placement order: shards, call lanes, program lanes. */
  get layout(): { readonly shards: number; readonly lanes: number } {
    return { shards: this.#shards, lanes: this.#lanes };
  }

  /** Whether a placement is a probation lane for calls. */
  isProbation(placement: number): boolean {
    return placement >= this.#shards && placement < this.#shards + this.#lanes;
  }

  /** The program lane paired with a call lane: a suspect's programs run there, never beside its calls. */
  programLaneOf(placement: number): number {
    return this.isProbation(placement) ? placement + this.#lanes : placement;
  }

  /** Where a tenant+plugin's tasks run now: its shard, or its probation lane while it is a crash suspect. */
  placementOf(tenant: string, plugin: string | undefined): number {
    if (plugin !== undefined && this.#quarantine.isSuspect(tenant, plugin)) return this.#laneFor(tenant);
    return shardOf(tenant, this.#shards);
  }

  /** The tenant's lane, or the one fewest other suspect tenants hold now. */
  #laneFor(tenant: string): number {
    const now = Date.now();
    const held = this.#laneOf.get(tenant);
    if (held !== undefined) {
      held.at = now;
      return this.#shards + held.lane;
    }
    const holders = Array.from({ length: this.#lanes }, () => 0);
    for (const [name, entry] of this.#laneOf) {
      if (now - entry.at > LANE_HELD_MS) this.#laneOf.delete(name);
      else holders[entry.lane] = (holders[entry.lane] as number) + 1;
    }
    const lane = holders.indexOf(Math.min(...holders));
    this.#laneOf.set(tenant, { lane, at: now });
    return this.#shards + lane;
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
