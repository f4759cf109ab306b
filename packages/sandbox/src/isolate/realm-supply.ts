// Where a task's realm comes from and where it goes after: the tenant's warm realm (lent to
// one task at a time), the spare built ahead of the next fresh call while nobody waits, or a
// new one. A realm a task left unhealthy is released, never lent again.
import type ivm from './ivm.js';
import type { IsolateSlot } from './isolate-slots.js';
import { partsMentioned, realmGlobalsCodeCache } from './install-realm-globals.js';
import { CodeCacheRemake } from './code-cache-remake.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import { bootstrapCodeCache, buildRealm, releaseRealm, WASM_OBJECTS_PER_REALM, type BootstrapCaches, type Realm } from './realm.js';

/** A WebAssembly memory, instance or module's weight against its isolate's native units (an Intl object weighs 1; isolate-runner.ts replaces an isolate past 500). */
const WASM_OBJECT_NATIVE_UNITS = 32;
/** Remakes that may end without remaking their caches (no memory for an isolate...) before this thread stops trying. */
const MAX_REMAKES_FAILED = 3;
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
  /** The code caches being made again, between steps. */
  #remake: CodeCacheRemake | undefined;
  #remakesFailed = 0;

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
   * One step of making this plugin's code caches again (code-cache-remake.ts), once per thread
   * for each bootstrap and set of the realm globals' parts; true while steps are left. Only
   * while the worker is idle. A remake left half done resumes when it is idle again.
   */
  remakeCodeCaches(plugin: PluginSpec): boolean {
    if (this.#remake === undefined || this.#remake.done) {
      const bootstrapCache = bootstrapCodeCache(plugin, this.#bootstrapCaches);
      const parts = this.#partsMentioned(plugin);
      const globalsCache = realmGlobalsCodeCache(parts);
      if (this.#remake !== undefined && !this.#remake.succeeded) this.#remakesFailed += 1;
      this.#remake = undefined;
      if ((bootstrapCache.remade && globalsCache.remade) || this.#remakesFailed >= MAX_REMAKES_FAILED) return false;
      this.#remake = new CodeCacheRemake(bootstrapCache, globalsCache, parts);
    }
    return this.#remake.step();
  }

  dispose(): void {
    this.#remake?.dispose();
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
