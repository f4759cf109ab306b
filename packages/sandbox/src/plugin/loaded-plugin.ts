import type { PluginSpec } from '../worker/worker-protocol.js';
import type { PluginManifest } from '../manifest/manifest-schema.js';
import type { PluginToolDescriptor } from './describe-plugin.js';

/** What a caller learns about a loaded plugin: where it came from, its manifest, its tools. */
export interface PluginInfo {
  readonly name: string;
  readonly dir: string;
  readonly manifest: PluginManifest;
  readonly tools: readonly PluginToolDescriptor[];
  /** What the operator should know though the plugin loaded (e.g. a secret the host does not supply), each naming its file. */
  readonly warnings?: readonly string[];
}

/** A plugin that passed every check, as the sandbox holds it: with its module, ready to run. */
export interface LoadedPlugin extends PluginInfo {
  readonly spec: PluginSpec;
}

/** The public view of a loaded plugin: the module source and internal spec stay inside. */
export function pluginInfo(plugin: LoadedPlugin): PluginInfo {
  return { name: plugin.name, dir: plugin.dir, manifest: plugin.manifest, tools: plugin.tools, warnings: plugin.warnings ?? [] };
}
