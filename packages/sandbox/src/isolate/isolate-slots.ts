// The isolates of one worker thread: one per tenant and plugin (never shared across
// tenants), least recently used evicted past a cap and the largest idle ones under memory
// pressure (worker/memory-guard.ts), each with its realms.
import ivm from './ivm.js';
import { MAX_ISOLATES_PER_WORKER } from './isolate-cap.js';
import type { Realm } from './realm.js';
import { heapBytesOf } from './task-failure.js';
import type { PluginSpec } from '../worker/worker-protocol.js';

/** Plugins this worker keeps an unassigned isolate ready for (the most recently served). */
const MAX_READY_PLUGINS = 4;

export interface IsolateSlot {
  readonly isolate: ivm.Isolate;
  /** Compiled once per isolate, run in every new realm. */
  bootstrap: ivm.Script | undefined;
  /** The realm's standard helpers (install-realm-globals.ts): compiled once per isolate, run in every new realm. */
  realmGlobals: ivm.Script | undefined;
  /** The realm reused across calls of its tenant when the manifest opts into "warm". */
  warm: Realm | undefined;
  /** A realm built ahead of the next call ("fresh" mode): never used by any call yet. */
  spare: Realm | undefined;
  /** CPU the isolate used since its heap was last read after a task (task-failure.ts, heapCheckDue). */
  cpuSinceHeapCheckMs: number;
  /** The tenant and plugin whose isolate this is (none while it waits, ready, for a new tenant). */
  owner: IsolateOwner | undefined;
  /** Tasks running in it now: an isolate in use is never evicted. */
  busy: number;
  /** Tasks its tenant ran in it: a spare realm is built only for a tenant that came back. */
  served: number;
  /** Native units its realms made (Intl objects, WebAssembly memories: realm-bootstrap.ts): memory its heap does not show. */
  nativeUnits: number;
  /** Told of a contained catastrophe (isolated-vm's message) while a call runs here: the call's verdict. */
  lost: ((message: string) => void) | undefined;
}

/** What a native unit may hold beside its heap, as eviction reckons it (an Intl DateTimeFormat that formatted a range: about 75 KB). */
export const NATIVE_UNIT_BYTES = 80 * 1024;

export interface IsolateOwner {
  readonly tenant: string;
  readonly plugin: string;
}

/**
 * Told, synchronously, when V8 lost control of an isolate (out of memory past recovery, a
 * task that would not terminate): whose isolate it was, and isolated-vm's message. Returns
 * true when the catastrophe is contained (the process ends gracefully, see isolate-slots'
 * handler); otherwise this process aborts right after.
 */
export type CatastropheWitness = (owner: IsolateOwner | undefined, message: string) => boolean;

export class IsolateSlots {
  // Insertion order doubles as LRU order: a used slot is re-inserted at the end.
  readonly #slots = new Map<string, IsolateSlot>();
  /**
   * Per plugin, an isolate created ahead (with the plugin's memory limit) for the next tenant
   * that has none: it has run no plugin code, and the first tenant to take it owns it for good.
   */
  readonly #ready = new Map<string, IsolateSlot>();
  /** Isolates evicted past the cap, disposed after the task that evicted them (disposeRetired). */
  #retired: ivm.Isolate[] = [];
  #failNext = false;
  readonly #witness: CatastropheWitness;

  constructor(witness: CatastropheWitness = () => false) {
    this.#witness = witness;
  }

  /** Testing only: the next isolate creation throws, as it would when the system is out of memory. */
  failNextIsolate(): void {
    this.#failNext = true;
  }

  /** The tenant's isolate for this plugin, created if it has none (or its last one died). */
  forTenant(tenant: string, plugin: PluginSpec): IsolateSlot {
    const key = slotKey(tenant, plugin);
    const existing = this.#slots.get(key);
    if (existing !== undefined && !existing.isolate.isDisposed && !this.#failNext) {
      this.#slots.delete(key);
      this.#slots.set(key, existing);
      return existing;
    }
    const slot = this.#takeReady(plugin) ?? this.throwaway(plugin);
    slot.owner = { tenant, plugin: plugin.name };
    this.#slots.set(key, slot);
    while (this.#slots.size > MAX_ISOLATES_PER_WORKER) {
      const [oldestKey, oldest] = this.#slots.entries().next().value as [string, IsolateSlot];
      this.#slots.delete(oldestKey);
      // Disposing takes most of a millisecond: not on the path of the call that evicted it.
      this.#retired.push(oldest.isolate);
    }
    return slot;
  }

  /** Whether evicted isolates wait to be disposed. */
  get hasRetired(): boolean {
    return this.#retired.length > 0;
  }

  /** Disposes the isolates evicted past the cap (nothing of theirs runs: they were idle). */
  disposeRetired(): void {
    const retired = this.#retired;
    this.#retired = [];
    for (const isolate of retired) disposeQuietly(isolate);
  }

  /**
   * Creates the plugin's next unassigned isolate if it has none; returns it for realm
   * building ahead (nothing of a tenant's in it). Only ever called while the worker is idle.
   */
  prepareReady(plugin: PluginSpec): IsolateSlot | undefined {
    const existing = this.#ready.get(plugin.key);
    if (existing !== undefined && !existing.isolate.isDisposed) return existing;
    if (this.#failNext) return undefined; // a test's injected fault is for the next call's own creation
    const slot = this.throwaway(plugin);
    this.#ready.set(plugin.key, slot);
    while (this.#ready.size > MAX_READY_PLUGINS) {
      const [oldestKey, oldest] = this.#ready.entries().next().value as [string, IsolateSlot];
      this.#ready.delete(oldestKey);
      disposeQuietly(oldest.isolate);
    }
    return slot;
  }

  #takeReady(plugin: PluginSpec): IsolateSlot | undefined {
    if (this.#failNext) return undefined;
    const ready = this.#ready.get(plugin.key);
    this.#ready.delete(plugin.key);
    return ready === undefined || ready.isolate.isDisposed ? undefined : ready;
  }

  /** An isolate that belongs to no tenant yet (describing a plugin: `owner` says whose blame it is), disposed by whoever asked. */
  throwaway(plugin: PluginSpec, owner?: IsolateOwner): IsolateSlot {
    if (this.#failNext) {
      this.#failNext = false;
      throw new Error('injected fault: isolate creation failed');
    }
    // The callback reads `slot` (declared below) only later, on a catastrophe.
    const isolate = new ivm.Isolate({
      memoryLimit: plugin.limits.memoryMb,
      // V8 lost control of the isolate, and isolated-vm has stopped its thread for good (a task
      // that would not terminate is suspended; out of memory, it sleeps): the other isolates
      // are sound. isolated-vm's advice is to take no new work, finish what is in flight and
      // end the process, and the witness says whether this process can (a sandbox process of
      // our own, which its parent then retires). If not, it aborts.
      onCatastrophicError: (message) => {
        let contained = false;
        try {
          contained = this.#witness(slot.owner, message);
        } finally {
          if (contained) {
            slot.lost?.(message);
            // Never used again, by a call running now or a later one.
            disposeQuietly(slot.isolate);
            process.stderr.write(`airlock sandbox: catastrophic isolate failure (${message}); its thread is stopped, and this sandbox process takes no new calls and ends once its calls in flight are answered\n`);
          } else {
            process.stderr.write(`airlock sandbox: catastrophic isolate failure (${message}); aborting this sandbox process\n`);
            // In a worker thread process.abort() throws instead of aborting: signal the process.
            process.kill(process.pid, 'SIGABRT');
          }
        }
      },
    });
    const slot: IsolateSlot = { isolate, bootstrap: undefined, realmGlobals: undefined, warm: undefined, spare: undefined, cpuSinceHeapCheckMs: 0, owner, busy: 0, served: 0, nativeUnits: 0, lost: undefined };
    return slot;
  }

  /** A slot that hit a limit or failed is never reused. */
  discard(tenant: string | undefined, plugin: PluginSpec, slot: IsolateSlot): void {
    if (tenant !== undefined) {
      const key = slotKey(tenant, plugin);
      if (this.#slots.get(key) === slot) this.#slots.delete(key);
    }
    slot.warm = undefined;
    slot.spare = undefined;
    disposeQuietly(slot.isolate);
  }

  /**
   * Disposes the tenant isolate holding the most memory (V8 heap and array buffers) among
   * those no task uses, if it holds at least `minBytes`: its tenant's next call starts cold.
   * Returns how much it held (0 when none qualifies).
   */
  evictLargestIdle(minBytes: number): number {
    let largest: { key: string; slot: IsolateSlot; bytes: number } | undefined;
    for (const [key, slot] of this.#slots) {
      if (slot.busy > 0 || slot.isolate.isDisposed) continue;
      let bytes: number;
      try {
        bytes = heapBytesOf(slot.isolate) + slot.nativeUnits * NATIVE_UNIT_BYTES;
      } catch {
        continue; // disposed meanwhile
      }
      if (bytes >= minBytes && (largest === undefined || bytes > largest.bytes)) largest = { key, slot, bytes };
    }
    if (largest === undefined) return 0;
    this.#slots.delete(largest.key);
    largest.slot.warm = undefined;
    largest.slot.spare = undefined;
    disposeQuietly(largest.slot.isolate);
    return largest.bytes;
  }

  disposeAll(): void {
    this.disposeRetired();
    for (const slot of [...this.#slots.values(), ...this.#ready.values()]) disposeQuietly(slot.isolate);
    this.#slots.clear();
    this.#ready.clear();
  }
}

function slotKey(tenant: string, plugin: PluginSpec): string {
  return `${tenant}\u0000${plugin.key}`;
}

export function disposeQuietly(isolate: ivm.Isolate): void {
  if (isolate.isDisposed) return;
  try {
    isolate.dispose();
  } catch {
    // already disposing
  }
}
