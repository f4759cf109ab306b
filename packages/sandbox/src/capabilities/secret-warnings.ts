// A manifest may name a secret the host does not supply. That is not a load error (the
// plugin may work without the origins that need it), but the operator should hear of it
// before the first call, not discover it as a failing request: fetch refuses every request
// to a secret's origins while its value is missing, rather than send one without it.
import type { PluginManifest } from '../manifest/manifest-schema.js';

/** One warning per secret the manifest names that `supplied` has no value for. */
export function unsuppliedSecrets(manifest: PluginManifest, supplied: Readonly<Record<string, unknown>> | undefined): string[] {
  return Object.keys(manifest.secrets ?? {})
    .filter((name) => supplied === undefined || !Object.hasOwn(supplied, name))
    .map((name) => `secrets.${name}: this host supplies no value for it, so fetch refuses requests to its origins`);
}
