// Which capabilities an executor treats as offered when it reads a manifest. The host that
// makes a call owns and answers its capabilities, so the executor cannot know what a host
// offers; it expands the manifest's grants exactly as a host offering them would (a group
// like "workspace" becomes its functions), which keeps the plugin's fingerprint equal to the
// host's. A host that does not offer a grant never loads the plugin, so never calls it here.
import { KV_FUNCTIONS } from '../capabilities/kv.js';
import { WORKSPACE_FUNCTIONS } from '../capabilities/workspace.js';

const STANDARD_FUNCTIONS: readonly string[] = ['log', 'fetch', ...WORKSPACE_FUNCTIONS, ...KV_FUNCTIONS];

export function offerableCapabilities(requested: readonly string[]): ReadonlySet<string> {
  const offered = new Set(STANDARD_FUNCTIONS);
  for (const name of requested) {
    // A name that is a standard group ("kv") expands to its functions; anything else is the host's own function.
    if (!STANDARD_FUNCTIONS.some((standard) => standard.startsWith(`${name}.`))) offered.add(name);
  }
  return offered;
}
