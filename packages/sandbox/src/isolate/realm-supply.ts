// Where a task's realm comes from and where it goes after: the tenant's warm realm (lent to
// one task at a time), the spare built ahead of the next fresh call while nobody waits, or a
// new one. A realm a task left unhealthy is released, never lent again.
import ivm from './ivm.js';
import { disposeQuietly, type IsolateSlot } from './isolate-slots.js';
import { exerciseParts, partsMentioned, realmGlobalsCodeCache } from './install-realm-globals.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import { bootstrapCodeCache, buildRealm, releaseRealm, runOwnScripts, WASM_OBJECTS_PER_REALM, type BootstrapCaches, type Realm } from './realm.js';

/** A WebAssembly memory, instance or module's weight against its isolate's native units (an Intl object weighs 1; isolate-runner.ts replaces an isolate past 500). */
const WASM_OBJECT_NATIVE_UNITS = 32;
/** The memory limit of the isolate the code caches are made in: our scripts only, a few MB. */
const OWN_ISOLATE_MB = 64;
/** Plugins whose parts are remembered; a worker sees few. */
const MAX_PLUGINS_REMEMBERED = 64;

export class RealmSupply {
  /** The host function every realm's bootstrap keeps: the host end of the call registry. */
  readonly #host: ivm.Callback;
  /** V8's code cache for plugin modules, shared by every isolate of this thread. */
  readonly #codeCache = new Map<string, ivm.ExternalCopy<ArrayBuffer>>();
  /** The same for the bootstraps, compiled once in every new isolate (with the realm globals: script-code-cache.ts). */
  readonly #bootstrapCaches: BootstrapCaches = new Map();
  /** Per plugin key, the realm globals' parts its source mentions (install-realm-globals.ts). */
  readonly #parts = new Map<string, number>();

  constructor(host: ivm.Callback) {
    this.#host = host;
  }

  /** The realm for the next task in this slot: the warm one if asked for, else the spare, else a new one. */
  take(slot: IsolateSlot, plugin: PluginSpec, warm: boolean): Realm {
    return (warm ? takeWarm(slot) : undefined) ?? takeSpare(slot) ?? this.#build(slot, plugin);
  }

  /** After its task: a warm realm the task left healthy goes back to its slot; any other is released. */
  giveBack(slot: IsolateSlot, realm: Realm, keepWarm: boolean): void {
    if (keepWarm) slot.warm = realm;
    else releaseRealm(realm);
  }

  /** Builds the next call's fresh realm while nobody waits; a failure just means none is ready. */
  prepareSpare(slot: IsolateSlot, plugin: PluginSpec): void {
    if (slot.spare !== undefined || slot.isolate.isDisposed) return;
    try {
      slot.spare = this.#build(slot, plugin);
    } catch {
      slot.spare = undefined;
    }
  }

  #build(slot: IsolateSlot, plugin: PluginSpec): Realm {
    slot.bootstrap ??= bootstrapCodeCache(plugin, this.#bootstrapCaches).compile(slot.isolate);
    slot.realmGlobals ??= realmGlobalsCodeCache(this.#partsMentioned(plugin)).compile(slot.isolate);
    const realm = buildRealm(slot.isolate, slot.bootstrap, slot.realmGlobals, plugin, this.#host, this.#codeCache);
    // Counted as if it made every WebAssembly memory it may (a realm's memories outlive it as
    // garbage a small heap seldom collects): the isolate is replaced after a few such realms.
    if (plugin.grants.webAssembly === true) slot.nativeUnits += WASM_OBJECTS_PER_REALM * WASM_OBJECT_NATIVE_UNITS;
    return realm;
  }

  /**
   * Once per thread for each bootstrap and set of the realm globals' parts: the code caches this
   * plugin's isolates compile from, made again (script-code-cache.ts) in an isolate of our own
   * that runs nothing else, never a tenant's, with its own memory limit. Only while the worker
   * is idle: it takes about 10 ms, 30 when the plugin's source names the URL part.
   */
  remakeCodeCaches(plugin: PluginSpec): void {
    const bootstrapCache = bootstrapCodeCache(plugin, this.#bootstrapCaches);
    const parts = this.#partsMentioned(plugin);
    const globalsCache = realmGlobalsCodeCache(parts);
    if (bootstrapCache.remade && globalsCache.remade) return;
    let isolate: ivm.Isolate | undefined;
    try {
      isolate = new ivm.Isolate({ memoryLimit: OWN_ISOLATE_MB });
      const bootstrap = bootstrapCache.compile(isolate);
      const realmGlobals = globalsCache.compile(isolate);
      runOwnScripts(isolate, bootstrap, realmGlobals);
      bootstrapCache.remakeAfterRun(isolate);
      const own = isolate;
      globalsCache.remakeAfterRun(isolate, () => exerciseParts(own, realmGlobals, parts));
    } catch {
      // no isolate to be had, or our scripts failed in it: the caches stay as they are
    } finally {
      if (isolate !== undefined) disposeQuietly(isolate);
    }
  }

  /** Which of the realm globals' parts the plugin's source mentions: read once per plugin (its source can be large). */
  #partsMentioned(plugin: PluginSpec): number {
    let parts = this.#parts.get(plugin.key);
    if (parts === undefined) {
      if (this.#parts.size >= MAX_PLUGINS_REMEMBERED) this.#parts.clear();
      parts = partsMentioned(plugin.source);
      this.#parts.set(plugin.key, parts);
    }
    return parts;
  }
}

/** A spare realm serves exactly one call: taking it empties the slot. */
function takeSpare(slot: IsolateSlot): Realm | undefined {
  const spare = slot.spare;
  slot.spare = undefined;
  return spare;
}

/** The warm realm is lent to one task at a time and put back only if that task left it healthy. */
function takeWarm(slot: IsolateSlot): Realm | undefined {
  const warm = slot.warm;
  slot.warm = undefined;
  return warm;
}
