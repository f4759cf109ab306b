// createSandbox: loads third-party plugins and exposes them as core tools, with the
// manifest's permissions as policy rules and classifiers run inside the isolates.
import { onAbort, type AnyTool, type PolicyRule, type PreSchedule } from '@airlock/core';
import { SandboxError } from './errors/sandbox-error.js';
import { InProcessHost } from './host/in-process-host.js';
import { assertSnapshotFlag } from './host/snapshot-flag.js';
import type { PoolOptions, SandboxHost } from './host/sandbox-host.js';
import { HOST_LIMIT_CAPS, type PluginLimits } from './manifest/host-limits.js';
import { crossPluginProblems } from './plugin/cross-plugin-problems.js';
import { describePlugin } from './plugin/describe-plugin.js';
import { discoverPluginFolders } from './plugin/discover-plugins.js';
import { pluginInfo, type LoadedPlugin, type PluginInfo } from './plugin/loaded-plugin.js';
import type { Capability } from './plugin/capability-handler.js';
import { classifyInSandbox, type Verdicts } from './plugin/classify-in-sandbox.js';
import { DEFAULT_TENANT } from './plugin/default-tenant.js';
import { pluginPolicyRules } from './plugin/plugin-policy-rules.js';
import { pluginTools, type CallHooks } from './plugin/plugin-tools.js';
import { Admission } from './admission/admission.js';
import { CrashQuarantine } from './host/crash-quarantine.js';
import { probationLanes, ShardedHost } from './host/sharded-host.js';
import { shardOf } from './host/shard-placement.js';
import { tenancySettings, type FairShareSettings, type QuarantineSettings } from './tenancy-options.js';
import type { Fault } from './worker/worker-protocol.js';
import { availableParallelism } from 'node:os';
import { readPluginFolder } from './plugin/read-plugin-folder.js';
import { readSandboxOptions } from './options/check-sandbox-options.js';
import { standardCapabilities, type StandardCapabilityOptions } from './capabilities/standard-capabilities.js';
import { secretBindingProblems, sharedSecretProblems } from './capabilities/secret-binding.js';
import { unsuppliedSecrets } from './capabilities/secret-warnings.js';

export interface SandboxOptions extends StandardCapabilityOptions {
  /**
   * "process" (default): the isolate pool runs in a supervised child process, so an
   * isolate that takes its process down cannot take yours. "in-process": the pool runs
   * in this process (needs --no-node-snapshot); an isolated-vm OOM may then abort it.
   */
  readonly mode?: 'process' | 'in-process';
  /**
   * Sandboxed calls running at once, across all sandbox processes; any one tenant may fill
   * them all. Each process's pool has this many worker threads plus the reserve. Default:
   * available parallelism, at least 2, so a lone tenant can keep every core busy.
   */
  readonly threads?: number;
  /**
   * Sandbox processes (process mode). Each tenant runs in one, chosen by a stable hash of
   * its id, so a process abort costs only the calls in flight in that process. Default 2.
   * Each starts with the first task placed on it: that call waits for the process to start.
   */
  readonly processes?: number;
  /** OS-level resident-memory ceiling of each sandbox process, in MiB (process mode). Default 2048. */
  readonly processMemoryMb?: number;
  /** The most any manifest may ask for; lower these to tighten every plugin. */
  readonly caps?: Partial<PluginLimits>;
  /**
   * Work-conserving fair share: a tenant uses every idle thread; only when several tenants
   * have calls waiting does each get its share (by weight, default 1).
   */
  readonly fairShare?: FairShareSettings;
  /** When a tenant+plugin that keeps crashing its sandbox process is refused, and for how long (process mode). */
  readonly quarantine?: QuarantineSettings;
  /**
   * Your own host functions plugins may be granted by name (manifest `capabilities`), next to
   * the standard ones (`log` always; `workspace.*` and `kv.*` when options.workspace and
   * options.kv configure them). Each takes and returns JSON; a failure reaches the plugin as
   * a generic error. Yours may replace `log` (a well-formed request still joins the call's
   * log, where the worker records it in order), not a configured standard one.
   */
  readonly capabilities?: Readonly<Record<string, Capability>>;
}

export interface PluginReport {
  readonly dir: string;
  readonly name: string | undefined;
  readonly tools: readonly string[];
  readonly problems: readonly string[];
  /** Not problems (the plugin loads), but worth saying: a secret the manifest names that this host does not supply. */
  readonly warnings: readonly string[];
}

export interface Sandbox {
  /** Loads plugin folders (or folders of them); throws SandboxError listing every problem. */
  loadPlugins(paths: readonly string[]): Promise<PluginInfo[]>;
  /** Checks plugin folders without loading them into the sandbox's tool list. */
  checkPlugins(paths: readonly string[]): Promise<PluginReport[]>;
  /** The plugins loaded so far. */
  plugins(): readonly PluginInfo[];
  /** Core tool definitions for every loaded plugin tool. */
  tools(): AnyTool[];
  /** The manifests' permissions, as core policy rules scoped to each plugin's tools. */
  policyRules(): PolicyRule[];
  /** Pass to the engine: runs plugin classifiers inside their isolates before scheduling. */
  readonly preSchedule: PreSchedule;
  /** Which sandbox process (0-based shard) a tenant's calls run in; always 0 in in-process mode. */
  shardOf(tenant: string): number;
  close(): Promise<void>;
}

/**
 * A sandbox for third-party plugins: each runs in isolated-vm isolates on a Piscina pool, by
 * default inside a supervised child process. Load plugins, then hand the sandbox to
 * `createEngine({ sources: [sandbox], policy })`; `close()` when done. Throws SandboxError
 * INVALID_OPTION listing every bad option by path.
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  return openSandbox(options, {});
}

/** Test-only hooks, reached through `@airlock/sandbox/testing`, never through the main entry. */
export interface TestingHooks {
  /** A fault to inject into a call: kill its worker thread or sandbox process, or fail its isolate's creation. */
  readonly faults?: ((call: { readonly callId: string; readonly tool: string; readonly tenant: string }) => Fault | undefined) | undefined;
  /** How long an idle probation lane's process lives (default a minute). */
  readonly laneIdleMs?: number | undefined;
}

/** The process ids hosting each sandbox's isolates, for supervision tests. */
export const sandboxHosts = new WeakMap<Sandbox, SandboxHost>();

/** What Code Mode runs its programs through: this sandbox's hosts, admission and caps (internal; not on the main entry). */
export interface SandboxInternals {
  readonly host: SandboxHost;
  readonly hooks: CallHooks;
  /** Admission for Code Mode programs: a budget of its own, on threads of their own (see below). */
  readonly programAdmission: Admission;
  /** How many programs it may run at once, in all: the type stripper's threads. */
  readonly programThreads: number;
  readonly caps: PluginLimits;
  /** Its calls run on remote executors (a HostOverride), which hold no Code Mode plugin. */
  readonly remote: boolean;
}
export const sandboxInternals = new WeakMap<Sandbox, SandboxInternals>();

/** Runs the sandbox's tasks somewhere else (remote executors, remote/remote-sandbox.ts) instead of local processes. */
export interface HostOverride {
  readonly host: SandboxHost;
}

export function openSandbox(given: SandboxOptions, testing: TestingHooks, override?: HostOverride): Sandbox {
  const options = readSandboxOptions(given);
  const caps: PluginLimits = { ...HOST_LIMIT_CAPS, ...options.caps };
  const threads = options.threads ?? Math.max(2, availableParallelism());
  const tenancy = tenancySettings(options);
  const loaded: LoadedPlugin[] = [];
  // The standard capabilities the host configured (log always), then the embedder's own (names and functions checked above).
  const standard = standardCapabilities(options, (name) => loaded.find((plugin) => plugin.name === name)?.manifest);
  const offered = new Map<string, Capability>(Object.entries(standard.capabilities));
  for (const [name, capability] of Object.entries(options.capabilities ?? {})) {
    if (offered.has(name) && name !== 'log') throw new SandboxError('INVALID_OPTION', `options.capabilities.${name} is also a standard capability this host configured (options.network, .workspace or .kv)`);
    offered.set(name, capability);
  }
  const inProcess = options.mode === 'in-process';
  // The pool holds the reserve threads too; admission decides who may use them. Code Mode
  // programs get threads of their own beside them, admitted from a separate fair budget: a
  // program waits for its sub-calls on its thread, so if programs took the calls' threads,
  // `threads` programs at once would leave none for the sub-calls they wait on (a deadlock
  // until their wall clocks). A program is mostly idle; its own CPU, heap and wall-clock
  // limits bound what it computes on its thread.
  const callThreads = threads + tenancy.reserveThreads;
  const pool = { threads: callThreads * 2, probationThreads: 2, probationLanes: probationLanes(callThreads) };
  // Remote executors keep their own quarantine, next to the processes that crash.
  const quarantine = inProcess || override !== undefined ? undefined : new CrashQuarantine(tenancy.quarantine);
  const memory = options.processMemoryMb === undefined ? {} : { processMemoryMb: options.processMemoryMb };
  const sharded = quarantine === undefined ? undefined : new ShardedHost({ ...pool, ...memory, processes: tenancy.processes, quarantine, loaderTenant: DEFAULT_TENANT, ...(testing.laneIdleMs === undefined ? {} : { laneIdleMs: testing.laneIdleMs }) });
  const host: SandboxHost = override?.host ?? sharded ?? inProcessHost(pool);
  const admission = new Admission({
    threads,
    reserveThreads: tenancy.reserveThreads,
    claimMs: tenancy.claimMs,
    // Each shard's pool can hold every admitted call; each probation lane runs one at a time.
    placements: sharded === undefined ? [callThreads] : placementsOf(sharded, callThreads, 'calls'),
    weightOf: tenancy.weightOf,
    placementOf: sharded === undefined ? () => 0 : (tenant, plugin) => sharded.placementOf(tenant, plugin),
  });
  // The same shape and fairness for programs, on their own threads; a suspect program runs in
  // the programs' probation process, one at a time, never beside a suspect call.
  const programAdmission = new Admission({
    threads,
    reserveThreads: tenancy.reserveThreads,
    claimMs: tenancy.claimMs,
    placements: sharded === undefined ? [callThreads] : placementsOf(sharded, callThreads, 'programs'),
    weightOf: tenancy.weightOf,
    placementOf: sharded === undefined ? () => 0 : (tenant, plugin) => sharded.programLaneOf(sharded.placementOf(tenant, plugin)),
  });
  const hooks: CallHooks = { admission, refusal: (tenant, plugin) => quarantine?.refusal(tenant, plugin), capabilities: offered, faultFor: testing.faults };
  const verdicts: Verdicts = new WeakMap();
  // Both derived from the loaded plugins; rebuilt only when a load changes them.
  let toolCache: AnyTool[] | undefined;
  let classifierCache: PreSchedule | undefined;
  let closed = false;

  const inspect = async (dir: string): Promise<{ report: PluginReport; plugin: LoadedPlugin | undefined }> => {
    const folder = await readPluginFolder(dir, caps, new Set(offered.keys()));
    const problems = [...folder.problems];
    if (folder.manifest !== undefined) for (const problem of secretBindingProblems(folder.manifest, standard.secrets)) problems.push(`${folder.manifestPath}: ${problem}`);
    let tools: LoadedPlugin['tools'] = [];
    const warnings = folder.manifest === undefined ? [] : unsuppliedSecrets(folder.manifest, options.secrets).map((warning) => `${folder.manifestPath}: ${warning}`);
    // Described even beside the manifest's other problems, so a check reports the module's and
    // the permission rules' problems at once with them (describing runs the module in a
    // throwaway isolate under the manifest's own limits); such a plugin never loads. Not by
    // remote executors: they serve no plugin with problems, and would add only "no executor
    // serves" to the report.
    if (folder.manifest !== undefined && folder.spec !== undefined && (problems.length === 0 || override === undefined)) {
      tools = await describePlugin(host, folder.spec, folder.manifest, folder.manifestPath, problems, warnings);
    }
    const plugin = problems.length === 0 && folder.manifest !== undefined && folder.spec !== undefined
      ? { name: folder.manifest.name, dir, manifest: folder.manifest, spec: folder.spec, tools, warnings }
      : undefined;
    return { report: { dir, name: folder.manifest?.name, tools: tools.map((tool) => tool.name), problems, warnings }, plugin };
  };

  const checkPlugins = async (paths: readonly string[]): Promise<PluginReport[]> => {
    const reports: PluginReport[] = [];
    for (const dir of await discoverPluginFolders(paths)) reports.push((await inspect(dir)).report);
    return reports;
  };

  const sandbox: Sandbox = {
    checkPlugins,
    async loadPlugins(paths) {
      if (closed) throw new SandboxError('SANDBOX_CLOSED', 'the sandbox is closed');
      const fresh: LoadedPlugin[] = [];
      const problems: string[] = [];
      for (const dir of await discoverPluginFolders(paths)) {
        const { report, plugin } = await inspect(dir);
        problems.push(...report.problems);
        if (plugin !== undefined) fresh.push(plugin);
      }
      if (problems.length > 0) throw new SandboxError('INVALID_PLUGIN', problems[0] as string, problems);
      // Two plugins with one name, or exposing the same tool name, is a load error, never a silent shadow.
      problems.push(...crossPluginProblems([...loaded, ...fresh].map((plugin) => ({ name: plugin.name, dir: plugin.dir, tools: plugin.tools.map((tool) => tool.name) }))));
      if (problems.length > 0) throw new SandboxError('DUPLICATE_TOOL', problems[0] as string, problems);
      // A secret the host left unbound goes to one plugin only: another naming it could send it to its own origin.
      const shared = sharedSecretProblems([...loaded, ...fresh], standard.secrets);
      if (shared.length > 0) throw new SandboxError('INVALID_PLUGIN', shared[0] as string, shared);
      loaded.push(...fresh);
      toolCache = undefined;
      classifierCache = undefined;
      return fresh.map(pluginInfo);
    },
    plugins: () => loaded.map(pluginInfo),
    tools() {
      toolCache ??= loaded.flatMap((plugin) => pluginTools(plugin, host, verdicts, hooks));
      return [...toolCache];
    },
    policyRules: () => loaded.flatMap(pluginPolicyRules),
    preSchedule: (calls, turn) => (classifierCache ??= classifyInSandbox(loaded, host, verdicts, admission))(calls, turn),
    shardOf: (tenant) => (sharded === undefined ? 0 : shardOf(tenant, tenancy.processes)),
    async close() {
      closed = true;
      await host.close();
      await standard.close();
    },
  };
  sandboxHosts.set(sandbox, host);
  sandboxInternals.set(sandbox, { host, hooks, programAdmission, programThreads: callThreads, caps, remote: override !== undefined });
  return sandbox;
}

/** In-process mode: the pool runs in the embedder's own process, which must have been started with --no-node-snapshot. */
function inProcessHost(pool: PoolOptions): InProcessHost {
  assertSnapshotFlag();
  return new InProcessHost({ ...pool, watchAbort: onAbort });
}

/** How many calls (or programs) each process may run: a shard its pool's threads, a probation lane of their own kind one. */
function placementsOf(sharded: ShardedHost, callThreads: number, kind: 'calls' | 'programs'): number[] {
  const { shards, lanes } = sharded.layout;
  const lane = (mine: boolean): number[] => Array.from({ length: lanes }, () => (mine ? 1 : 0));
  return [...Array.from({ length: shards }, () => callThreads), ...lane(kind === 'calls'), ...lane(kind === 'programs')];
}
