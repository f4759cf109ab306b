// A secret goes only to its own origins, and only on requests network.allow lets out. An
// origin of a secret that network.allow does not cover is a mistake (often http for https,
// or a port): the secret could never be sent, and the plugin's requests to the origin it
// meant would go out without it. So the manifest is refused, naming the path.
import type { PluginManifest } from '../manifest/manifest-schema.js';
import { parseOrigin, type OriginPattern } from './network-origins.js';

export function covers(allow: OriginPattern, origin: OriginPattern): boolean {
  if (allow.protocol !== origin.protocol || allow.port !== origin.port) return false;
  if (!allow.wildcard) return !origin.wildcard && allow.host === origin.host;
  // "*.example.com" covers "api.example.com", "*.api.example.com", and "*.example.com" itself.
  return origin.host.endsWith(`.${allow.host}`) || (origin.wildcard && origin.host === allow.host);
}

/** One problem per secret origin no network.allow entry covers. */
export function uncoveredSecretOrigins(manifest: PluginManifest): string[] {
  const allow = (manifest.network?.allow ?? []).flatMap((text) => parseOrigin(text) ?? []);
  const problems: string[] = [];
  for (const [name, secret] of Object.entries(manifest.secrets ?? {})) {
    secret.origins.forEach((text, index) => {
      const origin = parseOrigin(text);
      if (origin !== undefined && !allow.some((entry) => covers(entry, origin))) {
        problems.push(`secrets.${name}.origins.${index} (${text}) is not in network.allow, so the secret could never be sent there`);
      }
    });
  }
  return problems;
}
