// Host secrets are global by name, and a manifest only names one: without a binding on the
// host's side, any plugin could name another plugin's secret and list its own origin for it.
// So the host may bind a secret to origins (a manifest's origins for it must lie inside them)
// and to plugins (no other plugin may name it); a secret the host leaves unbound may be named
// by one plugin only. A manifest outside its binding does not load, naming the path.
import { SandboxError } from '../errors/sandbox-error.js';
import type { PluginManifest } from '../manifest/manifest-schema.js';
import { usableSecret } from './fetch.js';
import { parseOrigin, type OriginPattern } from './network-origins.js';
import { covers } from './secret-origins.js';

/** A value, or a per-tenant lookup (a vault's, say: it may answer with a promise, waited for within the call). */
export type SecretValue = string | ((tenant: string) => string | undefined | Promise<string | undefined>);

/** What an embedder passes per secret name: the value, or the value and where it may go. */
export type HostSecret = SecretValue | { readonly value: SecretValue; readonly origins?: readonly string[]; readonly plugins?: readonly string[] };

export interface BoundSecret {
  readonly value: SecretValue;
  /** Undefined: any origin the manifest lists (and network.allow covers). */
  readonly origins: readonly OriginPattern[] | undefined;
  /** Undefined: any one plugin. */
  readonly plugins: ReadonlySet<string> | undefined;
}

function usableValue(value: unknown): value is SecretValue {
  return typeof value === 'function' || usableSecret(value);
}

/** The host's secrets checked and parsed; a bad entry is an INVALID_OPTION naming its path. */
export function bindSecrets(secrets: Readonly<Record<string, HostSecret>> | undefined): Record<string, BoundSecret> {
  if (secrets === undefined) return {};
  if (secrets === null || typeof secrets !== 'object' || Array.isArray(secrets)) throw new SandboxError('INVALID_OPTION', 'options.secrets must be an object of secret values by name');
  const bound: Record<string, BoundSecret> = {};
  for (const [name, given] of Object.entries(secrets)) {
    const path = `options.secrets.${name}`;
    if (usableValue(given)) {
      bound[name] = { value: given, origins: undefined, plugins: undefined };
      continue;
    }
    if (given === null || typeof given !== 'object' || Array.isArray(given)) throw new SandboxError('INVALID_OPTION', `${path} must be a non-empty string of printable ASCII with no space at either end, or a function of the tenant, or { value, origins?, plugins? }`);
    const extra = Object.keys(given).find((key) => key !== 'value' && key !== 'origins' && key !== 'plugins');
    if (extra !== undefined) throw new SandboxError('INVALID_OPTION', `${path}.${extra} is not a setting of a secret (value, origins, plugins)`);
    if (!usableValue(given.value)) throw new SandboxError('INVALID_OPTION', `${path}.value must be a non-empty string of printable ASCII with no space at either end, or a function of the tenant`);
    let origins: OriginPattern[] | undefined;
    if (given.origins !== undefined) {
      if (!Array.isArray(given.origins) || given.origins.length === 0) throw new SandboxError('INVALID_OPTION', `${path}.origins must be a non-empty list of origins`);
      origins = given.origins.map((text: unknown, index) => {
        const parsed = typeof text === 'string' ? parseOrigin(text) : undefined;
        if (parsed === undefined) throw new SandboxError('INVALID_OPTION', `${path}.origins.${index} must be an origin like "https://api.example.com" or "https://*.example.com"`);
        return parsed;
      });
    }
    let plugins: Set<string> | undefined;
    if (given.plugins !== undefined) {
      if (!Array.isArray(given.plugins) || given.plugins.length === 0 || !given.plugins.every((plugin: unknown) => typeof plugin === 'string' && plugin.length > 0)) throw new SandboxError('INVALID_OPTION', `${path}.plugins must be a non-empty list of plugin names`);
      plugins = new Set(given.plugins);
    }
    bound[name] = { value: given.value, origins, plugins };
  }
  return bound;
}

/** One problem per way this manifest reaches outside the host's binding of a secret it names. */
export function secretBindingProblems(manifest: PluginManifest, bound: Readonly<Record<string, BoundSecret>>): string[] {
  const problems: string[] = [];
  for (const [name, secret] of Object.entries(manifest.secrets ?? {})) {
    const binding = Object.hasOwn(bound, name) ? bound[name] : undefined;
    if (binding === undefined) continue;
    if (binding.plugins !== undefined && !binding.plugins.has(manifest.name)) {
      problems.push(`secrets.${name}: the host binds this secret to ${[...binding.plugins].map((plugin) => `"${plugin}"`).join(', ')}, not to plugin "${manifest.name}"`);
    }
    if (binding.origins === undefined) continue;
    const hostOrigins = binding.origins;
    secret.origins.forEach((text, index) => {
      const origin = parseOrigin(text);
      if (origin === undefined || !hostOrigins.some((allowed) => covers(allowed, origin))) {
        problems.push(`secrets.${name}.origins.${index} (${text}) is outside the origins the host binds this secret to (${hostOrigins.map((allowed) => allowed.text).join(', ')})`);
      }
    });
  }
  return problems;
}

/** A secret the host supplies unbound, named by more than one plugin: every plugin after the first is a problem. */
export function sharedSecretProblems(plugins: readonly { readonly dir: string; readonly manifest: PluginManifest }[], bound: Readonly<Record<string, BoundSecret>>): string[] {
  const problems: string[] = [];
  const first = new Map<string, string>();
  for (const plugin of plugins) {
    for (const name of Object.keys(plugin.manifest.secrets ?? {})) {
      const binding = Object.hasOwn(bound, name) ? bound[name] : undefined;
      if (binding === undefined || binding.origins !== undefined || binding.plugins !== undefined) continue;
      const owner = first.get(name);
      if (owner === undefined) first.set(name, plugin.dir);
      else if (owner !== plugin.dir) problems.push(`${plugin.dir}: secrets.${name}: plugin ${owner} names this secret too, and the host does not bind it; bind it to its origins or plugins (options.secrets.${name} = { value, origins, plugins }, or --secret ${name}=env:VARIABLE@https://origin)`);
    }
  }
  return problems;
}
