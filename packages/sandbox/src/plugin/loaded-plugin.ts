import type { PluginSpec } from '../isolate/protocol.js';
import type { PluginManifest } from '../manifest/manifest-schema.js';
import type { PluginToolDescriptor } from './describe-plugin.js';

/** A plugin that passed every check: its manifest, its module, its tools. */
export interface LoadedPlugin {
  readonly name: string;
  readonly dir: string;
  readonly manifest: PluginManifest;
  readonly spec: PluginSpec;
  readonly tools: readonly PluginToolDescriptor[];
}
