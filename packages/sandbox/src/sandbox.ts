// createSandbox: loads third-party plugins and exposes them as core tools, with the
// manifest's permissions as policy rules and classifiers run inside the isolates.
import type { AnyTool, PolicyRule, PreSchedule } from '@airlock/core';
import { SandboxError } from './errors/sandbox-error.js';
import { ChildProcessHost } from './host/child-process-host.js';
import { InProcessHost } from './host/in-process-host.js';
import type { SandboxHost } from './host/sandbox-host.js';
import { HOST_LIMIT_CAPS, type PluginLimits } from './manifest/host-limits.js';
import { crossPluginProblems } from './plugin/cross-plugin-problems.js';
import { describePlugin } from './plugin/describe-plugin.js';
import { discoverPluginFolders } from './plugin/discover-plugins.js';
import { pluginInfo, type LoadedPlugin, type PluginInfo } from './plugin/loaded-plugin.js';
import { classifyInSandbox, pluginPolicyRules, pluginTools, type CallHooks, type Capability, type Verdicts } from './plugin/plugin-tools.js';
import { TenantGate } from './plugin/tenant-gate.js';
import type { Fault } from './isolate/protocol.js';
import { availableParallelism } from 'node:os';
import { readPluginFolder } from './plugin/read-plugin-folder.js';
import { checkSandboxOptions } from './options/check-sandbox-options.js';

export interface SandboxOptions {
  /**
   * "process" (default): the isolate pool runs in a supervised child process, so an
   * isolate that takes its process down cannot take yours. "in-process": the pool runs
   * in this process (needs --no-node-snapshot); an isolated-vm OOM may then abort it.
   */
  readonly mode?: 'process' | 'in-process';
  /** Worker threads in the pool. Default: available parallelism, at least 2. */
  readonly threads?: number;
  /** OS-level resident-memory ceiling of the sandbox process, in MiB (process mode). Default 2048. */
  readonly processMemoryMb?: number;
  /** The most any manifest may ask for; lower these to tighten every plugin. */
  readonly caps?: Partial<PluginLimits>;
  /**
   * Most sandboxed calls one tenant may have running at once; the rest wait their turn.
   * Default: half the pool's threads, at least 1, so one tenant never holds the whole pool.
   */
  readonly maxConcurrentPerTenant?: number;
  /**
   * Host functions plugins may be granted by name (manifest `capabilities`); none by default.
   * Each takes and returns JSON; a failure reaches the plugin as a generic error.
   */
  readonly capabilities?: Readonly<Record<string, Capability>>;
}

export interface PluginReport {
  readonly dir: string;
  readonly name: string | undefined;
  readonly tools: readonly string[];
  readonly problems: readonly string[];
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
}

/** The process ids hosting each sandbox's isolates, for supervision tests. */
export const sandboxHosts = new WeakMap<Sandbox, SandboxHost>();

export function openSandbox(options: SandboxOptions, testing: TestingHooks): Sandbox {
  checkSandboxOptions(options);
  const caps: PluginLimits = { ...HOST_LIMIT_CAPS, ...options.caps };
  const threads = options.threads ?? Math.max(2, availableParallelism());
  const perTenant = options.maxConcurrentPerTenant ?? Math.max(1, Math.floor(threads / 2));
  const offered = new Map<string, Capability>(Object.entries(options.capabilities ?? {}));
  const hooks: CallHooks = { gate: new TenantGate(perTenant), capabilities: offered, faultFor: testing.faults };
  const pool = { threads };
  const host: SandboxHost = options.mode === 'in-process'
    ? new InProcessHost(pool)
    : new ChildProcessHost({ ...pool, ...(options.processMemoryMb === undefined ? {} : { processMemoryMb: options.processMemoryMb }) });
  const loaded: LoadedPlugin[] = [];
  const verdicts: Verdicts = new WeakMap();
  // Both derived from the loaded plugins; rebuilt only when a load changes them.
  let toolCache: AnyTool[] | undefined;
  let classifierCache: PreSchedule | undefined;
  let closed = false;

  const inspect = async (dir: string): Promise<{ report: PluginReport; plugin: LoadedPlugin | undefined }> => {
    const folder = await readPluginFolder(dir, caps, new Set(offered.keys()));
    const problems = [...folder.problems];
    let tools: LoadedPlugin['tools'] = [];
    if (folder.manifest !== undefined && folder.spec !== undefined && problems.length === 0) {
      tools = await describePlugin(host, folder.spec, folder.manifest, folder.manifestPath, problems);
    }
    const plugin = problems.length === 0 && folder.manifest !== undefined && folder.spec !== undefined
      ? { name: folder.manifest.name, dir, manifest: folder.manifest, spec: folder.spec, tools }
      : undefined;
    return { report: { dir, name: folder.manifest?.name, tools: tools.map((tool) => tool.name), problems }, plugin };
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
    preSchedule: (calls, turn) => (classifierCache ??= classifyInSandbox(loaded, host, verdicts))(calls, turn),
    async close() {
      closed = true;
      await host.close();
    },
  };
  sandboxHosts.set(sandbox, host);
  return sandbox;
}
