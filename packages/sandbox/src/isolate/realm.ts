// A realm: one V8 context in a plugin's isolate, with the bootstrap run and the plugin's
// module compiled and linked. Building one runs no plugin code, so realms can be built
// ahead of a call; the module is evaluated inside the call that uses the realm.
//
// The plugin module is imported by a one-line link module of ours, which hands the plugin's
// namespace to the bootstrap inside the realm once the plugin's top level has run. So the
// host never needs the namespace, and a call can queue its first task right behind the
// evaluation instead of waiting for it: one trip between threads less per fresh realm.
import ivm from './ivm.js';
import { ScriptCodeCache } from './script-code-cache.js';
import { realmBootstrap, type CallBounds } from './realm-bootstrap.js';
import { installRealmGlobals } from './install-realm-globals.js';
import { withContextLock } from './context-lock.js';
import { MAX_RESULT_CONTAINERS } from './json-containers.js';
import { MAX_CAPABILITY_BYTES, MAX_CAPABILITY_BYTES_IN_FLIGHT, MAX_CAPABILITY_IN_FLIGHT, MAX_CAPABILITY_REQUESTS, MAX_LOG_BYTES, MAX_LOG_LINES } from './live-call.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import { CODE_MODE_PLUGIN } from '../code-mode/code-mode-plugin.js';
import type { Watchdog } from './watchdog.js';

/** Where the host puts its function for the bootstrap to take (and delete). */
const HOST_GLOBAL = '__airlock_host';
/**
 * Where the bootstrap leaves its link function for LINK_SOURCE. The plugin's top level runs
 * first and may find it: calling it (it takes the first namespace only) or removing it gives
 * the plugin no more than its own exports already do, in its own realm.
 */
const LINK_GLOBAL = '__airlock_link';
const PLUGIN_SPECIFIER = 'airlock:plugin';
/** Evaluated after the plugin's top level has run: the plugin's namespace goes to the bootstrap. */
const LINK_SOURCE = `import * as plugin from ${JSON.stringify(PLUGIN_SPECIFIER)}; const link = globalThis[${JSON.stringify(LINK_GLOBAL)}]; delete globalThis[${JSON.stringify(LINK_GLOBAL)}]; link(plugin);`;
/** The bootstrap is our own code, but it runs in the plugin's isolate: bound it all the same. */
const BOOTSTRAP_TIMEOUT_MS = 1000;

/** WebAssembly memories and instances one realm may make (each reserves about 10 GiB of address space), and modules it may compile (each keeps its bytes and code off the heap). */
export const WASM_OBJECTS_PER_REALM = 4;
/** The host's per-call bounds, held in the realm before anything is copied out (realm-bootstrap.ts); units bound bytes from below. */
const CALL_BOUNDS_JSON = JSON.stringify({
  logLines: MAX_LOG_LINES,
  logUnits: MAX_LOG_BYTES,
  requests: MAX_CAPABILITY_REQUESTS,
  inFlight: MAX_CAPABILITY_IN_FLIGHT,
  unitsInFlight: MAX_CAPABILITY_BYTES_IN_FLIGHT,
  resultContainers: MAX_RESULT_CONTAINERS,
} satisfies CallBounds);

/** The plugin module did not compile, link or evaluate: the plugin's fault, not a crash. */
export class PluginLoadFailure extends Error {}

export interface Realm {
  readonly context: ivm.Context;
  /** The plugin's module, and ours that imports it; `link` is the one evaluated. */
  readonly modules: { readonly plugin: ivm.Module; readonly link: ivm.Module };
  readonly entry: ivm.Reference;
  /** The plugin's top level ran to the end in this realm. */
  evaluated: boolean;
}

/**
 * V8's code caches for bootstraps, keyed by the bootstrap's whole text (never by a plugin's
 * name): V8 checks a cache against little more than its source's length, so one compiled for
 * another plugin's grants could otherwise run here. Bounded: a worker sees few plugins.
 */
export type BootstrapCaches = Map<string, ScriptCodeCache>;
const MAX_CACHED_BOOTSTRAPS = 64;

/** The bootstrap for one plugin's isolates (its grants and capability names baked in), as a script and its code cache. */
export function bootstrapCodeCache(plugin: PluginSpec, caches: BootstrapCaches): ScriptCodeCache {
  // A plugin's result must be JSON as it stands; a Code Mode program's is written as JSON.stringify
  // would (undefined keys dropped), as the model that wrote it expects.
  const strictResults = plugin.name !== CODE_MODE_PLUGIN;
  const args = [HOST_GLOBAL, LINK_GLOBAL, JSON.stringify(plugin.capabilities), MAX_CAPABILITY_BYTES, plugin.grants.webAssembly === true, plugin.grants.sharedArrayBuffer === true, WASM_OBJECTS_PER_REALM, strictResults, CALL_BOUNDS_JSON];
  const source = `(${realmBootstrap.toString()})(${args.map((arg) => JSON.stringify(arg)).join(', ')})`;
  let cache = caches.get(source);
  if (cache === undefined) {
    if (caches.size >= MAX_CACHED_BOOTSTRAPS) caches.clear();
    // A new isolate compiles it in about a quarter of the time with the cache (0.12 vs 0.46 ms).
    cache = new ScriptCodeCache(source, 'airlock:bootstrap');
    caches.set(source, cache);
  }
  return cache;
}

/**
 * Runs the realm's helpers and the bootstrap in a context of their own, then releases it, as a
 * realm's build would (with a host function that does nothing): in an isolate of ours that
 * runs nothing else, so that V8 compiles what they run (script-code-cache.ts).
 */
export function runOwnScripts(isolate: ivm.Isolate, bootstrap: ivm.Script, realmGlobals: ivm.Script): void {
  const context = withContextLock(() => isolate.createContextSync());
  try {
    installRealmGlobals(context, realmGlobals);
    context.global.setSync(HOST_GLOBAL, new ivm.Callback(() => undefined));
    const entry = bootstrap.runSync(context, { timeout: BOOTSTRAP_TIMEOUT_MS, reference: true }) as ivm.Reference;
    entry.release();
  } finally {
    context.release();
  }
}

/**
 * V8's parser builds its syntax tree in zone memory, which no heap limit counts: 8 MiB of
 * `{a},` took 2.4 GB to compile and took a sandbox process past its ceiling, and each worker
 * compiles a module once more (later realms read the compiled code back from the cache).
 * A module whose first compile needs more than this is refused, at load, with a message.
 */
const MAX_COMPILE_MALLOC_BYTES = 256 * 1024 * 1024;

function refuseCostlyCompile(isolate: ivm.Isolate, mallocedBefore: number): void {
  const used = isolate.getHeapStatisticsSync().peak_malloced_memory - mallocedBefore;
  if (used > MAX_COMPILE_MALLOC_BYTES) {
    throw new PluginLoadFailure(`compiling the module took ${Math.round(used / 1048576)} MiB of memory outside its heap limit, more than ${MAX_COMPILE_MALLOC_BYTES / 1048576} MiB: a module of very many literals at its top level costs this; build large data at run time, or load it through a capability`);
  }
}

/**
 * Builds a realm with isolated-vm's synchronous API. Only ever called on an idle isolate:
 * no plugin code runs outside a call, so nothing can hold the isolate's lock here.
 */
export function buildRealm(isolate: ivm.Isolate, bootstrap: ivm.Script, realmGlobals: ivm.Script, plugin: PluginSpec, host: ivm.Callback, codeCache: Map<string, ivm.ExternalCopy<ArrayBuffer>>): Realm {
  const context = withContextLock(() => isolate.createContextSync());
  try {
    // The standard helpers first, before the host's function is on the global.
    installRealmGlobals(context, realmGlobals);
    context.global.setSync(HOST_GLOBAL, host);
    // The bootstrap's completion value is its entry function, never put on the global.
    const entry = bootstrap.runSync(context, { timeout: BOOTSTRAP_TIMEOUT_MS, reference: true }) as ivm.Reference;
    const cachedData = codeCache.get(plugin.key);
    const mallocedBefore = cachedData === undefined ? isolate.getHeapStatisticsSync().malloced_memory : 0;
    const pluginModule = isolate.compileModuleSync(plugin.source, {
      filename: `plugin:${plugin.name}`,
      ...(cachedData === undefined ? { produceCachedData: true } : { cachedData }),
    });
    if (cachedData === undefined) refuseCostlyCompile(isolate, mallocedBefore);
    const produced = (pluginModule as unknown as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
    if (cachedData === undefined && produced !== undefined) codeCache.set(plugin.key, produced);
    pluginModule.instantiateSync(context, (specifier) => {
      throw new Error(`plugins are one self-contained module; import "${specifier}" is not available`);
    });
    const link = isolate.compileModuleSync(LINK_SOURCE, { filename: 'airlock:link' });
    // The plugin module is already instantiated: only the link module's own import is resolved here.
    link.instantiateSync(context, (specifier) => {
      if (specifier === PLUGIN_SPECIFIER) return pluginModule;
      throw new Error(`unknown module "${specifier}"`);
    });
    return { context, modules: { plugin: pluginModule, link }, entry, evaluated: false };
  } catch (error) {
    try {
      context.release();
    } catch {
      // the isolate is already gone
    }
    const message = error instanceof Error ? error.message : String(error);
    throw isolate.isDisposed ? error : new PluginLoadFailure(message);
  }
}

/**
 * Runs the plugin module's top level: plugin code, so only inside a call's budget, and
 * asynchronously: a top level that throws an object whose `message` getter spins would
 * otherwise hold this worker thread while isolated-vm copies the error out, with the
 * watchdog unable to run. Resolves 'ok', or with the module's own load failure; a limit
 * is the watchdog's verdict (it is told when the evaluation stopped at its timeout).
 * The caller may start the call's task at once: isolated-vm runs an isolate's tasks in
 * order, and the bootstrap answers a task that finds no linked plugin with
 * a marker decode-outcome.ts turns into a load failure.
 */
export async function evaluateRealm(isolate: ivm.Isolate, realm: Realm, watchdog: Watchdog): Promise<'ok' | PluginLoadFailure> {
  if (realm.evaluated) return 'ok';
  const timeout = watchdog.taskTimeoutMs();
  const started = performance.now();
  try {
    await realm.modules.link.evaluate({ timeout });
    realm.evaluated = true;
    return 'ok';
  } catch (error) {
    if (isolate.isDisposed) throw error;
    // The clock, not the message, tells a stop at our timeout: a plugin can throw "timed out" too.
    if (performance.now() - started >= timeout - 1) {
      watchdog.taskStopped();
      return watchdog.expired;
    }
    return new PluginLoadFailure(error instanceof Error ? error.message : String(error));
  }
}

/** Each handle on its own: after a kill one may throw, and the others must still go. */
export function releaseRealm(realm: Realm): void {
  for (const handle of [realm.entry, realm.modules.link, realm.modules.plugin, realm.context]) {
    try {
      handle?.release();
    } catch {
      // the isolate is already gone
    }
  }
}
