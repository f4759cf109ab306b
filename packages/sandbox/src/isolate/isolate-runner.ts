// Runs sandbox tasks in isolated-vm isolates: one isolate per tenant and plugin,
// a fresh realm per call unless the manifest opts into a warm one, and every
// isolate that hit a limit or failed outside the wrapper disposed, never reused.
import ivm from './ivm.js';
import { BOOTSTRAP_SOURCE, CAPABILITY_NAMES_GLOBAL, CAPABILITY_REFERENCE_GLOBAL, ENTRY_GLOBAL } from './bootstrap-source.js';
import { PluginLoadFailure, failureCode } from './failure-code.js';
import { NO_USAGE, type CapabilityHandler, type PluginSpec, type SandboxOutcome, type SandboxTask, type Usage } from './protocol.js';
import { Watchdog } from './watchdog.js';

/** Classifiers run under a tight budget: anything slower just means exclusive. */
const CLASSIFY_BUDGET = { cpuMs: 50, timeoutMs: 250 };
const DESCRIBE_BUDGET_CAP = { cpuMs: 2000, timeoutMs: 5000 };
const MAX_ISOLATES_PER_WORKER = 32;
/** Largest JSON a capability call may pass either way. */
const MAX_CAPABILITY_BYTES = 1024 * 1024;

interface Realm {
  readonly context: ivm.Context;
  readonly module: ivm.Module;
  readonly entry: ivm.Reference;
  readonly namespace: ivm.Reference;
}

interface IsolateSlot {
  readonly isolate: ivm.Isolate;
  /** Compiled once per isolate, run in every new context. */
  bootstrap: ivm.Script | undefined;
  /** The realm reused per tenant when the manifest opts into "warm". */
  warm: Realm | undefined;
  /** A fresh realm built ahead of the next call ("fresh" mode): never used by any call yet. */
  spare: Realm | undefined;
}

export class IsolateRunner {
  // Insertion order doubles as LRU order: a used slot is re-inserted at the end.
  readonly #slots = new Map<string, IsolateSlot>();
  readonly #codeCache = new Map<string, ivm.ExternalCopy<ArrayBuffer>>();
  #failNextIsolate = false;
  /** The running call's capabilities: set for the duration of one call task only. */
  #capabilities: { readonly granted: ReadonlySet<string>; readonly handler: CapabilityHandler } | undefined;
  /** The one host function realms can reach, and only those granted capabilities. */
  readonly #capabilityReference = new ivm.Reference(async (name: unknown, json: unknown): Promise<string> => this.#callCapability(name, json));

  async #callCapability(name: unknown, json: unknown): Promise<string> {
    const current = this.#capabilities;
    // Host failures reach the plugin as a generic error: no host message, path or stack.
    if (current === undefined || typeof name !== 'string' || !current.granted.has(name)) throw new Error('capability unavailable');
    if (typeof json !== 'string' || json.length > MAX_CAPABILITY_BYTES) throw new Error(`capability ${name}: argument too large`);
    let answer: string;
    try {
      answer = await current.handler(name, json);
    } catch {
      throw new Error(`capability ${name} failed`);
    }
    if (answer.length > MAX_CAPABILITY_BYTES) throw new Error(`capability ${name}: answer too large`);
    return answer;
  }

  /** Testing only: the next isolate creation throws, as it would when the system is out of memory. */
  failNextIsolate(): void {
    this.#failNextIsolate = true;
  }

  async run(task: SandboxTask, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    switch (task.kind) {
      case 'ping':
        return { ok: true, json: '"pong"', usage: NO_USAGE };
      case 'describe':
        // Describing loads the module in a throwaway isolate: no tenant's isolate is touched.
        return this.#inIsolate(task.plugin, undefined, {
          cpuMs: Math.min(task.plugin.limits.cpuMs * 2, DESCRIBE_BUDGET_CAP.cpuMs),
          timeoutMs: Math.min(task.plugin.limits.timeoutMs, DESCRIBE_BUDGET_CAP.timeoutMs),
        }, 0, (realm, budget) => realm.entry.apply(undefined, [realm.namespace.derefInto(), 'describe'], budget));
      case 'classify': {
        const callsJson = JSON.stringify(task.calls);
        return this.#inIsolate(task.plugin, task.tenant, CLASSIFY_BUDGET, callsJson.length, (realm, budget) =>
          realm.entry.apply(undefined, [realm.namespace.derefInto(), 'classify', callsJson], budget));
      }
      case 'call': {
        const context = JSON.stringify({ callId: task.callId, tenant: task.tenant });
        if (capabilities !== undefined && task.plugin.capabilities.length > 0) this.#capabilities = { granted: new Set(task.plugin.capabilities), handler: capabilities };
        try {
          return await this.#inIsolate(task.plugin, task.tenant, task.plugin.limits, task.argsJson.length, (realm, budget) =>
            realm.entry.apply(undefined, [realm.namespace.derefInto(), 'call', task.tool, task.argsJson, task.plugin.limits.maxOutputBytes, context], budget));
        } finally {
          this.#capabilities = undefined;
        }
      }
    }
  }

  async #inIsolate(
    plugin: PluginSpec,
    tenant: string | undefined,
    budget: { cpuMs: number; timeoutMs: number },
    bytesIn: number,
    invoke: (realm: Realm, options: { timeout: number; result: { promise: true } }) => Promise<unknown>,
  ): Promise<SandboxOutcome> {
    let slot: IsolateSlot;
    try {
      slot = tenant === undefined ? this.#newSlot(plugin) : this.#slotFor(tenant, plugin);
    } catch (error) {
      return { ok: false, code: 'SANDBOX_CRASH', message: `could not create an isolate (${(error as Error).message})`, usage: NO_USAGE };
    }
    const { isolate } = slot;
    const watchdog = new Watchdog(isolate, budget.cpuMs, budget.timeoutMs);
    const useWarm = tenant !== undefined && plugin.realm === 'warm';
    let realm: Realm | undefined;
    let healthy = false;
    try {
      realm = useWarm && slot.warm !== undefined ? slot.warm : takeSpare(slot) ?? this.#createRealm(slot, plugin, budget.cpuMs);
      const out = await Promise.race([invoke(realm, { timeout: budget.cpuMs, result: { promise: true } }), watchdog.expired]);
      const usage = this.#usage(watchdog, bytesIn, typeof out === 'string' ? out.length : 0);
      if (typeof out !== 'string') return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned something other than serialized JSON', usage };
      healthy = true;
      return decodeOutcome(out, plugin.limits.maxOutputBytes, usage);
    } catch (error) {
      const code = failureCode(error, watchdog.killedFor, isolate.isDisposed);
      return { ok: false, code, message: describeFailure(code, error, budget), usage: this.#usage(watchdog, bytesIn, 0) };
    } finally {
      watchdog.stop();
      if (healthy && useWarm && realm !== undefined) {
        slot.warm = realm;
      } else {
        if (realm !== undefined && realm !== slot.warm) releaseRealm(realm);
        if (!healthy) this.#discard(tenant, plugin, slot);
      }
      if (tenant === undefined) disposeQuietly(isolate);
      else if (healthy && !useWarm) setImmediate(() => this.#prepareSpare(slot, plugin));
    }
  }

  #usage(watchdog: Watchdog, bytesIn: number, bytesOut: number): Usage {
    const cpu = watchdog.cpuMs();
    return { cpuMs: cpu < 0 ? -1 : round(cpu), wallMs: round(watchdog.wallMs()), bytesIn, bytesOut };
  }

  #slotFor(tenant: string, plugin: PluginSpec): IsolateSlot {
    // The key holds the tenant: an isolate is never shared across tenants.
    const key = `${tenant}\u0000${plugin.key}`;
    const existing = this.#slots.get(key);
    if (existing !== undefined && !existing.isolate.isDisposed && !this.#failNextIsolate) {
      this.#slots.delete(key);
      this.#slots.set(key, existing);
      return existing;
    }
    const slot = this.#newSlot(plugin);
    this.#slots.set(key, slot);
    while (this.#slots.size > MAX_ISOLATES_PER_WORKER) {
      const [oldestKey, oldest] = this.#slots.entries().next().value as [string, IsolateSlot];
      this.#slots.delete(oldestKey);
      disposeQuietly(oldest.isolate);
    }
    return slot;
  }

  #newSlot(plugin: PluginSpec): IsolateSlot {
    if (this.#failNextIsolate) {
      this.#failNextIsolate = false;
      throw new Error('injected fault: isolate creation failed');
    }
    const isolate = new ivm.Isolate({
      memoryLimit: plugin.limits.memoryMb,
      // V8 lost control of the isolate: nothing in this process can be trusted any more.
      onCatastrophicError: (message) => {
        process.stderr.write(`airlock sandbox: catastrophic isolate failure (${message}); aborting this sandbox process\n`);
        process.abort();
      },
    });
    return { isolate, bootstrap: undefined, warm: undefined, spare: undefined };
  }

  #discard(tenant: string | undefined, plugin: PluginSpec, slot: IsolateSlot): void {
    if (tenant !== undefined) {
      const key = `${tenant}\u0000${plugin.key}`;
      if (this.#slots.get(key) === slot) this.#slots.delete(key);
    }
    slot.warm = undefined;
    slot.spare = undefined;
    disposeQuietly(slot.isolate);
  }

  /**
   * Builds a realm with isolated-vm's synchronous API: this worker serves one task at a
   * time, each async call would cost a thread hop, and `timeout` bounds the sync parts.
   */
  #createRealm(slot: IsolateSlot, plugin: PluginSpec, cpuMs: number): Realm {
    const { isolate } = slot;
    slot.bootstrap ??= isolate.compileScriptSync(`(${BOOTSTRAP_SOURCE})(${plugin.grants.webAssembly === true}, ${plugin.grants.sharedArrayBuffer === true})`);
    const context = isolate.createContextSync();
    try {
      if (plugin.capabilities.length > 0) {
        context.global.setSync(CAPABILITY_NAMES_GLOBAL, new ivm.ExternalCopy([...plugin.capabilities]).copyInto());
        context.global.setSync(CAPABILITY_REFERENCE_GLOBAL, this.#capabilityReference);
      }
      slot.bootstrap.runSync(context, { timeout: 1000 });
      // Taken before plugin code runs, then removed: the plugin never sees the entry.
      const entry = context.global.getSync(ENTRY_GLOBAL, { reference: true }) as ivm.Reference;
      context.global.deleteSync(ENTRY_GLOBAL);
      const cachedData = this.#codeCache.get(plugin.key);
      const module = isolate.compileModuleSync(plugin.source, {
        filename: `plugin:${plugin.name}`,
        ...(cachedData === undefined ? { produceCachedData: true } : { cachedData }),
      });
      const produced = (module as unknown as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
      if (cachedData === undefined && produced !== undefined) this.#codeCache.set(plugin.key, produced);
      module.instantiateSync(context, (specifier) => {
        throw new Error(`plugins are one self-contained module; import "${specifier}" is not available`);
      });
      module.evaluateSync({ timeout: cpuMs });
      return { context, module, entry, namespace: module.namespace };
    } catch (error) {
      try {
        context.release();
      } catch {
        // the isolate is already gone
      }
      const message = error instanceof Error ? error.message : String(error);
      throw message.includes('timed out') || message.includes('memory limit') || isolate.isDisposed ? error : new PluginLoadFailure(message);
    }
  }

  /** Builds the next call's fresh realm while nobody waits; a failure just means none is ready. */
  #prepareSpare(slot: IsolateSlot, plugin: PluginSpec): void {
    if (slot.spare !== undefined || slot.isolate.isDisposed) return;
    try {
      slot.spare = this.#createRealm(slot, plugin, plugin.limits.cpuMs);
    } catch {
      slot.spare = undefined;
    }
  }

  dispose(): void {
    for (const slot of this.#slots.values()) disposeQuietly(slot.isolate);
    this.#slots.clear();
  }
}

/** The isolate's string is untrusted: parse defensively and re-check its size on this side. */
function decodeOutcome(text: string, maxOutputBytes: number, usage: Usage): SandboxOutcome {
  if (Buffer.byteLength(text, 'utf8') > maxOutputBytes + 64) {
    return { ok: false, code: 'OUTPUT_TOO_LARGE', message: `the result is larger than ${maxOutputBytes} bytes`, usage };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned malformed JSON', usage };
  }
  if (typeof parsed !== 'object' || parsed === null) return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned an unexpected shape', usage };
  const record = parsed as Record<string, unknown>;
  if (record.ok === true && Object.prototype.hasOwnProperty.call(record, 'value')) {
    return { ok: true, json: JSON.stringify(record.value), usage };
  }
  const allowed = new Set(['TOOL_ERROR', 'OUTPUT_TOO_LARGE', 'INVALID_TOOL_OUTPUT']);
  if (record.ok === false && typeof record.code === 'string' && allowed.has(record.code) && typeof record.message === 'string') {
    return { ok: false, code: record.code as 'TOOL_ERROR', message: record.message.slice(0, 4000), usage };
  }
  return { ok: false, code: 'INVALID_TOOL_OUTPUT', message: 'the sandbox returned an unexpected shape', usage };
}

function describeFailure(code: string, error: unknown, budget: { cpuMs: number; timeoutMs: number }): string {
  switch (code) {
    case 'CPU_LIMIT':
      return `used more than ${budget.cpuMs} ms of CPU time`;
    case 'TIMEOUT':
      return `did not finish within ${budget.timeoutMs} ms`;
    case 'MEMORY_LIMIT':
      return 'exceeded its memory limit';
    case 'ABORTED':
      return 'cancelled while running';
    default: {
      // Compile and load errors (a SyntaxError, a bad import) are the plugin's own; host stacks are not.
      const message = error instanceof Error ? error.message.replace(/\s+at .*$/gms, '').slice(0, 500) : 'unknown failure';
      return error instanceof PluginLoadFailure ? `the plugin module failed to load: ${message}` : `the sandbox failed: ${message}`;
    }
  }
}

/** A spare realm serves exactly one call: taking it empties the slot. */
function takeSpare(slot: IsolateSlot): Realm | undefined {
  const spare = slot.spare;
  slot.spare = undefined;
  return spare;
}

/** Each handle on its own: after a kill one may throw, and the others must still go. */
function releaseRealm(realm: Realm): void {
  for (const handle of [realm.entry, realm.namespace, realm.module, realm.context]) {
    try {
      handle.release();
    } catch {
      // the isolate is already gone
    }
  }
}

function disposeQuietly(isolate: ivm.Isolate): void {
  if (isolate.isDisposed) return;
  try {
    isolate.dispose();
  } catch {
    // already disposing
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
