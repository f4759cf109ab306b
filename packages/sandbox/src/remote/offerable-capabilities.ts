// Which capabilities an executor treats as offered when it reads a manifest. The host that
// makes a call owns and answers its capabilities, so the executor cannot see what a host
// offers; it expands the manifest's grants exactly as a host offering them would (a group
// like "workspace" becomes its functions), which keeps the plugin's fingerprint equal to the
// host's. The hosts' own function names, when the operator gives them (`capabilityNames`),
// expand a group of theirs ("db" for db.query and db.exec) the same way; any other name is
// taken for one host function. A host that does not offer a grant never loads the plugin,
// so never calls it here.
import { KV_FUNCTIONS } from '../capabilities/kv.js';
import { WORKSPACE_FUNCTIONS } from '../capabilities/workspace.js';

const STANDARD_FUNCTIONS: readonly string[] = ['log', 'fetch', ...WORKSPACE_FUNCTIONS, ...KV_FUNCTIONS];

export function offerableCapabilities(requested: readonly string[], hostFunctions: readonly string[] = []): ReadonlySet<string> {
  const offered = new Set([...STANDARD_FUNCTIONS, ...hostFunctions]);
  const known = [...offered];
  for (const name of requested) {
    // A name that is a group of known functions ("kv", or one of the hosts') expands to them; anything else is one host function.
    if (!offered.has(name) && !known.some((offer) => offer.startsWith(`${name}.`))) offered.add(name);
  }
  return offered;
}
