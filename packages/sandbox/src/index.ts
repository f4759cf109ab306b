// The public API of @airlock/sandbox: everything a user may import is named here.

export { createSandbox } from './sandbox.js';
export { createRemoteSandbox } from './remote/remote-sandbox.js';
export type { RemoteSandboxOptions } from './remote/remote-sandbox.js';
export { startExecutor } from './remote/executor.js';
/** A NATS engine URL as it may be printed or logged: any user, password or token in it masked. */
export { shownEngineUrl } from './remote/connect-engine.js';
export type { Executor, ExecutorOptions, ExecutorPlugin } from './remote/executor.js';
export type { PluginReport, Sandbox, SandboxOptions } from './sandbox.js';
export type { FairShareSettings, QuarantineSettings } from './tenancy-options.js';
export { SandboxError } from './errors/sandbox-error.js';
export type { SandboxErrorCode } from './errors/sandbox-error.js';
export { DEFAULT_PLUGIN_LIMITS, HOST_LIMIT_CAPS, MIN_MEMORY_MB } from './manifest/host-limits.js';
export type { PluginLimits } from './manifest/host-limits.js';
export type { PluginManifest } from './manifest/manifest-schema.js';
export { MANIFEST_FILE } from './plugin/read-plugin-folder.js';
export { crossPluginProblems } from './plugin/cross-plugin-problems.js';
export type { PluginIdentity } from './plugin/cross-plugin-problems.js';
export { DEFAULT_TENANT } from './plugin/default-tenant.js';
export type { Capability, CapabilityContext } from './plugin/capability-handler.js';
export type { PluginToolDescriptor } from './plugin/describe-plugin.js';
export type { PluginInfo } from './plugin/loaded-plugin.js';
export { hasSnapshotFlag } from './host/snapshot-flag.js';
export type { KvOptions, NetworkOptions, StandardCapabilityOptions, WorkspaceOptions } from './capabilities/standard-capabilities.js';
export type { HostSecret } from './capabilities/secret-binding.js';
export type { KvNamespace, KvStore } from './capabilities/kv-store.js';
export { entryCharge, KV_ENTRY_OVERHEAD_BYTES } from './capabilities/kv-store.js';
export { SqliteKvStore } from './capabilities/sqlite-kv-store.js';
export { workspaceFolder } from './capabilities/workspace-path.js';
export type { Resolver } from './capabilities/fetch.js';
export { createCodeMode } from './code-mode/create-code-mode.js';
export type { CodeMode, CodeModeOptions } from './code-mode/create-code-mode.js';
