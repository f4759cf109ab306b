// A realm: one V8 context in a plugin's isolate, with the bootstrap run and the plugin's
// module compiled and linked. Building one runs no plugin code, so realms can be built
// ahead of a call; the module is evaluated inside the call that uses the realm.
import ivm from './ivm.js';
import { realmBootstrap } from './realm-bootstrap.js';
import { installRealmGlobals } from './install-realm-globals.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import type { Watchdog } from './watchdog.js';

/** Where the host puts its Reference for the bootstrap to take (and delete). */
const HOST_GLOBAL = '__airlock_host';
/** Where the bootstrap leaves its entry for the host to take (and delete). */
const ENTRY_GLOBAL = '__airlock_entry';
/** The bootstrap is our own code, but it runs in the plugin's isolate: bound it all the same. */
const BOOTSTRAP_TIMEOUT_MS = 1000;

/** The plugin module did not compile, link or evaluate: the plugin's fault, not a crash. */
export class PluginLoadFailure extends Error {}

export interface Realm {
  readonly context: ivm.Context;
  readonly module: ivm.Module;
  readonly entry: ivm.Reference;
  namespace: ivm.Reference | undefined;
}

/** The bootstrap as a script for one plugin's isolate: its grants and capability names baked in. */
export function compileBootstrap(isolate: ivm.Isolate, plugin: PluginSpec): ivm.Script {
  const args = [HOST_GLOBAL, ENTRY_GLOBAL, JSON.stringify(plugin.capabilities), plugin.grants.webAssembly === true, plugin.grants.sharedArrayBuffer === true];
  return isolate.compileScriptSync(`(${realmBootstrap.toString()})(${args.map((arg) => JSON.stringify(arg)).join(', ')})`, { filename: 'airlock:bootstrap' });
}

/**
 * Builds a realm with isolated-vm's synchronous API. Only ever called on an idle isolate:
 * no plugin code runs outside a call, so nothing can hold the isolate's lock here.
 */
export function buildRealm(isolate: ivm.Isolate, bootstrap: ivm.Script, realmGlobals: ivm.Script, plugin: PluginSpec, host: ivm.Reference, codeCache: Map<string, ivm.ExternalCopy<ArrayBuffer>>): Realm {
  const context = isolate.createContextSync();
  try {
    // The standard helpers first, before the host's Reference is on the global.
    installRealmGlobals(context, realmGlobals);
    context.global.setSync(HOST_GLOBAL, host);
    bootstrap.runSync(context, { timeout: BOOTSTRAP_TIMEOUT_MS });
    const entry = context.global.getSync(ENTRY_GLOBAL, { reference: true }) as ivm.Reference;
    context.global.deleteSync(ENTRY_GLOBAL);
    const cachedData = codeCache.get(plugin.key);
    const module = isolate.compileModuleSync(plugin.source, {
      filename: `plugin:${plugin.name}`,
      ...(cachedData === undefined ? { produceCachedData: true } : { cachedData }),
    });
    const produced = (module as unknown as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
    if (cachedData === undefined && produced !== undefined) codeCache.set(plugin.key, produced);
    module.instantiateSync(context, (specifier) => {
      throw new Error(`plugins are one self-contained module; import "${specifier}" is not available`);
    });
    return { context, module, entry, namespace: undefined };
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
 */
export async function evaluateRealm(isolate: ivm.Isolate, realm: Realm, watchdog: Watchdog): Promise<'ok' | PluginLoadFailure> {
  if (realm.namespace !== undefined) return 'ok';
  const timeout = watchdog.taskTimeoutMs();
  const started = performance.now();
  try {
    await realm.module.evaluate({ timeout });
    realm.namespace = realm.module.namespace;
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
  for (const handle of [realm.entry, realm.namespace, realm.module, realm.context]) {
    try {
      handle?.release();
    } catch {
      // the isolate is already gone
    }
  }
}
