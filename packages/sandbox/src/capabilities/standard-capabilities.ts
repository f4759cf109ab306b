// The standard capabilities a host offers when it configures them: fetch, workspace files,
// kv state and logs. Each is a set of named functions like an embedder's own; the manifest
// grants them by function or by group ("workspace" grants every "workspace.*").
import { resolve } from 'node:path';
import { SandboxError } from '../errors/sandbox-error.js';
import type { PluginManifest } from '../manifest/manifest-schema.js';
import type { Capability } from '../plugin/capability-handler.js';
import { DEFAULT_KV_MAX_BYTES, DEFAULT_KV_MAX_KEYS, kvCapabilities } from './kv.js';
import type { KvStore } from './kv-store.js';
import { logCapability } from './log.js';
import { DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_RESPONSE_BYTES, fetchCapability, MAX_RESPONSE_BYTES_CAP, systemResolver, type FetchSettings, type Resolver } from './fetch.js';
import { parseOrigin } from './network-origins.js';
import { bindSecrets, type BoundSecret, type HostSecret } from './secret-binding.js';
import { SqliteKvStore } from './sqlite-kv-store.js';
import { DEFAULT_WORKSPACE_MAX_BYTES, DEFAULT_WORKSPACE_MAX_FILES, workspaceCapabilities } from './workspace.js';

export interface WorkspaceOptions {
  /** The folder holding one subfolder per tenant; created when missing. */
  readonly dir: string;
  /** Most bytes of files in one tenant's folder (default 64 MiB); manifests may ask for less. */
  readonly maxBytes?: number;
  /** Most files and folders in one tenant's folder (default 10000); manifests may ask for less. */
  readonly maxFiles?: number;
}

export interface KvOptions {
  /** A SQLite file (created when missing), or your own store. One of the two. */
  readonly file?: string;
  readonly store?: KvStore;
  /** Most bytes per tenant+plugin (default 10 MiB): keys and values, plus tenant, plugin and 32 bytes per entry; manifests may ask for less. */
  readonly maxBytes?: number;
  /** Most keys per tenant+plugin (default 10000); manifests may ask for less. */
  readonly maxKeys?: number;
}

export interface NetworkOptions {
  /** Origins any plugin may reach at most; a manifest's network.allow is narrowed to these. */
  readonly allow: readonly string[];
  /** Requests per call (default 10) and bytes per response (default and cap 512 KiB); manifests may ask for less. */
  readonly maxRequestsPerCall?: number;
  readonly maxResponseBytes?: number;
  /** Resolves host names (default: the OS resolver); every address it gives is checked. */
  readonly resolve?: Resolver;
  /**
   * DNS names that may resolve to internal addresses (loopback, private, link-local), when
   * both allowlists name them exactly. Without this only IP-literal origins and localhost
   * may: whoever runs a name's DNS could point it at your internal services.
   */
  readonly allowInternal?: readonly string[];
}

export interface StandardCapabilityOptions {
  /** Offers `fetch`, to the origins listed here and in the plugin's manifest. */
  readonly network?: NetworkOptions;
  /**
   * Secret values the host adds to fetch requests where a manifest says (by name; a function
   * answers per tenant). `{ value, origins, plugins }` binds one: a manifest naming it with
   * an origin outside `origins`, or from a plugin outside `plugins`, does not load. A secret
   * bound to neither may be named by one plugin only.
   */
  readonly secrets?: Readonly<Record<string, HostSecret>>;
  /** Offers `workspace.*`: a folder (string) or its settings. */
  readonly workspace?: string | WorkspaceOptions;
  /** Offers `kv.*`: a SQLite file (string), or a file or store and settings. */
  readonly kv?: string | KvOptions;
}

export interface StandardCapabilities {
  readonly capabilities: Record<string, Capability>;
  /** The host's secrets with their bindings, for the load-time checks. */
  readonly secrets: Readonly<Record<string, BoundSecret>>;
  close(): Promise<void>;
}

function positive(value: number | undefined, fallback: number, path: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value > 0)) throw new SandboxError('INVALID_OPTION', `${path} must be a positive integer`);
  return value;
}

function internalHosts(names: readonly string[] | undefined): ReadonlySet<string> {
  if (names === undefined) return new Set();
  if (!Array.isArray(names)) throw new SandboxError('INVALID_OPTION', 'options.network.allowInternal must be a list of host names');
  return new Set(names.map((name: unknown, index) => {
    if (typeof name !== 'string' || !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/i.test(name)) throw new SandboxError('INVALID_OPTION', `options.network.allowInternal.${index} must be a host name like "db.internal" (no scheme, port or wildcard)`);
    return name.toLowerCase();
  }));
}

/** Builds the configured standard capabilities; `manifestOf` finds a loaded plugin's manifest by name. */
export function standardCapabilities(options: StandardCapabilityOptions, manifestOf: (plugin: string) => PluginManifest | undefined): StandardCapabilities {
  const capabilities: Record<string, Capability> = { log: logCapability };
  const closers: (() => void | Promise<void>)[] = [];
  const secrets = bindSecrets(options.secrets);
  if (options.workspace !== undefined) {
    const given = typeof options.workspace === 'string' ? { dir: options.workspace } : options.workspace;
    if (typeof given.dir !== 'string' || given.dir.length === 0) throw new SandboxError('INVALID_OPTION', 'options.workspace.dir must name a folder');
    const settings = {
      dir: resolve(given.dir),
      maxBytes: positive(given.maxBytes, DEFAULT_WORKSPACE_MAX_BYTES, 'options.workspace.maxBytes'),
      maxFiles: positive(given.maxFiles, DEFAULT_WORKSPACE_MAX_FILES, 'options.workspace.maxFiles'),
    };
    Object.assign(capabilities, workspaceCapabilities(settings, (plugin) => manifestOf(plugin)?.workspace));
  }
  if (options.kv !== undefined) {
    const given: KvOptions = typeof options.kv === 'string' ? { file: options.kv } : options.kv;
    if ((given.file === undefined) === (given.store === undefined)) throw new SandboxError('INVALID_OPTION', 'options.kv needs a file or a store (one of the two)');
    const limits = { maxBytes: positive(given.maxBytes, DEFAULT_KV_MAX_BYTES, 'options.kv.maxBytes'), maxKeys: positive(given.maxKeys, DEFAULT_KV_MAX_KEYS, 'options.kv.maxKeys') };
    let store: KvStore;
    if (given.store !== undefined) store = given.store;
    else {
      try {
        store = new SqliteKvStore(resolve(given.file as string));
      } catch (error) {
        throw new SandboxError('INVALID_OPTION', `options.kv: cannot open ${given.file as string} (${(error as Error).message})`);
      }
      closers.push(() => store.close?.());
    }
    Object.assign(capabilities, kvCapabilities(store, limits, (plugin) => manifestOf(plugin)?.kv));
  }
  if (options.network !== undefined) {
    const allow = (options.network.allow ?? []).map((text, index) => {
      const parsed = typeof text === 'string' ? parseOrigin(text) : undefined;
      if (parsed === undefined) throw new SandboxError('INVALID_OPTION', `options.network.allow.${index} must be an origin like "https://api.example.com" or "https://*.example.com"`);
      return parsed;
    });
    const settings: FetchSettings = {
      allow,
      maxRequestsPerCall: positive(options.network.maxRequestsPerCall, DEFAULT_MAX_REQUESTS_PER_CALL, 'options.network.maxRequestsPerCall'),
      maxResponseBytes: Math.min(positive(options.network.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'options.network.maxResponseBytes'), MAX_RESPONSE_BYTES_CAP),
      secrets,
      resolve: options.network.resolve ?? systemResolver,
      allowInternal: internalHosts(options.network.allowInternal),
    };
    capabilities.fetch = fetchCapability(settings, (plugin) => manifestOf(plugin));
  } else if (options.secrets !== undefined) {
    throw new SandboxError('INVALID_OPTION', 'options.secrets needs options.network: secrets go only into fetch requests');
  }
  return {
    capabilities,
    secrets,
    async close() {
      for (const close of closers) await close();
    },
  };
}

/** A manifest's grants as function names: a group the host offers no function of by that exact name grants its "group.*" functions. */
export function expandGrants(names: readonly string[], offered: ReadonlySet<string>): { granted: string[]; missing: number[] } {
  const granted = new Set<string>();
  const missing: number[] = [];
  names.forEach((name, index) => {
    if (offered.has(name)) return void granted.add(name);
    const members = [...offered].filter((offer) => offer.startsWith(`${name}.`));
    if (members.length === 0) missing.push(index);
    for (const member of members) granted.add(member);
  });
  return { granted: [...granted].sort(), missing };
}
