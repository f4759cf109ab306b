// The host's side of the realm's standard helpers (TextEncoder, URL, atob, structuredClone,
// crypto...): the bundle built by scripts/build-realm-globals.mjs from src/realm-globals,
// compiled once per isolate and run in every new realm before the bootstrap, and the
// random seed each realm gets.
import ivm from './ivm.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Where the realm's bundle reads (and deletes) its seed; must match src/realm-globals/install.ts. */
const SEED_GLOBAL = '__airlock_seed';
/** Our own code, but in the plugin's isolate: bound it all the same (it only defines accessors). */
const RUN_TIMEOUT_MS = 1000;

let source: string | undefined;
// V8's code cache for the bundle, made by the first isolate of this thread: the others
// compile it in a fraction of a millisecond instead of several.
let cachedData: ivm.ExternalCopy<ArrayBuffer> | undefined;

export function compileRealmGlobals(isolate: ivm.Isolate): ivm.Script {
  source ??= readFileSync(new URL('./realm-globals.js', import.meta.url), 'utf8');
  const script = isolate.compileScriptSync(source, { filename: 'airlock:realm-globals', ...(cachedData === undefined ? { produceCachedData: true } : { cachedData }) });
  // isolated-vm sets it on the script when asked to produce it; its typings omit the field (realm.ts reads it the same way).
  cachedData ??= (script as unknown as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
  return script;
}

/**
 * Installs the helpers in a new context, before the host's function is put there (this
 * code never sees it). The seed is 32 bytes from the OS CSPRNG, crossing as a plain hex
 * string: every realm, spares included, gets its own random stream.
 */
export function installRealmGlobals(context: ivm.Context, script: ivm.Script): void {
  context.global.setSync(SEED_GLOBAL, randomBytes(32).toString('hex'));
  script.runSync(context, { timeout: RUN_TIMEOUT_MS });
}
