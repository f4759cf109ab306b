// Runs sandbox tasks in isolated-vm isolates, one task at a time per worker thread. Each
// task gets a realm (a fresh one per call unless the manifest opts into a warm one), a
// watchdog for its CPU and wall-clock budget, and for calls a LiveCall that scopes every
// capability request to the call and says when the isolate is idle again. An isolate that
// hit a limit or failed is disposed, never reused.
import type ivm from './ivm.js';
import { CallRegistry } from './call-registry.js';
import { decodeEnvelope, decodeReport } from './decode-outcome.js';
import { failureCode } from './failure-code.js';
import { disposeQuietly, IsolateSlots, type IsolateSlot } from './isolate-slots.js';
import { NO_USAGE, type CallLogs, type CapabilityHandler, type PluginSpec, type SandboxFailureCode, type SandboxOutcome, type SandboxTask, type Usage } from '../worker/worker-protocol.js';
import { buildRealm, compileBootstrap, evaluateRealm, PluginLoadFailure, releaseRealm, type Realm } from './realm.js';
import { compileRealmGlobals } from './install-realm-globals.js';
import { runTask } from './run-task.js';
import { Watchdog } from './watchdog.js';

/** Classifiers run under a tight budget: anything slower just means exclusive. */
const CLASSIFY_BUDGET = { cpuMs: 50, timeoutMs: 250 };
const DESCRIBE_BUDGET_CAP = { cpuMs: 2000, timeoutMs: 5000 };
const MIB = 1024 * 1024;
/**
 * After a call, a heap past twice its limit (plus room for V8's young generation, which
 * isolated-vm's limit does not count) means the limit was outrun, not approached.
 */
const HEAP_OVERSHOOT_FACTOR = 2;
const HEAP_OVERSHOOT_SLACK_BYTES = 16 * MIB;

interface Budget {
  readonly cpuMs: number;
  readonly timeoutMs: number;
}

/** What a task's body hands back: its outcome once usage is known, and whether its realm may serve again. */
interface BodyResult {
  readonly outcome: (usage: Usage) => SandboxOutcome;
  readonly bytesOut: number;
  readonly reusable: boolean;
}

/** A task's work in its realm; `start` begins a task there under the watchdog. */
type Body = (realm: Realm & { namespace: ivm.Reference }, isolate: ivm.Isolate, start: (args: readonly unknown[]) => Promise<unknown>, atEnd: (cleanup: () => void) => void) => Promise<BodyResult>;

export class IsolateRunner {
  readonly #slots = new IsolateSlots();
  readonly #calls = new CallRegistry();
  readonly #codeCache = new Map<string, ivm.ExternalCopy<ArrayBuffer>>();

  /** Testing only: the next isolate creation throws, as it would when the system is out of memory. */
  failNextIsolate(): void {
    this.#slots.failNextIsolate();
  }

  async run(task: SandboxTask, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    switch (task.kind) {
      case 'ping':
        return { ok: true, json: '"pong"', usage: NO_USAGE };
      case 'describe': {
        // Describing loads the module in a throwaway isolate: no tenant's isolate is touched.
        const budget = { cpuMs: Math.min(task.plugin.limits.cpuMs * 2, DESCRIBE_BUDGET_CAP.cpuMs), timeoutMs: Math.min(task.plugin.limits.timeoutMs, DESCRIBE_BUDGET_CAP.timeoutMs) };
        return this.#inRealm(task.plugin, undefined, budget, 0, (realm, isolate, start) => this.#sync(isolate, start([realm.namespace.derefInto(), 'describe'])));
      }
      case 'classify': {
        const callsJson = JSON.stringify(task.calls);
        return this.#inRealm(task.plugin, task.tenant, CLASSIFY_BUDGET, callsJson.length, (realm, isolate, start) => this.#sync(isolate, start([realm.namespace.derefInto(), 'classify', callsJson])));
      }
      case 'call': {
        // What the plugin's console said, attached to the outcome however the call ended.
        let logsOf: (() => CallLogs) | undefined;
        const outcome = await this.#inRealm(task.plugin, task.tenant, task.plugin.limits, task.argsJson.length, async (realm, isolate, start, atEnd) => {
          const call = this.#calls.open({ isolate, granted: new Set(task.plugin.capabilities), capabilities, start });
          // Closed however the task ends (a kill included): from then on its requests find nothing.
          atEnd(() => this.#calls.close(call));
          logsOf = () => call.logs();
          const context = JSON.stringify({ callId: task.callId, tenant: task.tenant });
          call.trackEntry(start([realm.namespace.derefInto(), 'call', call.token, task.tool, task.argsJson, task.plugin.limits.maxOutputBytes, context]));
          const report = await call.finished;
          return {
            outcome: (usage) => decodeReport(report.kind, report.payload, task.plugin.limits.maxOutputBytes, usage),
            bytesOut: report.payload.length,
            // A realm that still waits on capability answers it will never get is not reused.
            reusable: call.unanswered === 0,
          };
        });
        const logs = logsOf?.();
        return logs === undefined || (logs.lines.length === 0 && logs.dropped === 0) ? outcome : { ...outcome, logs };
      }
    }
  }

  /** Describe and classify return their answer from the task itself. */
  async #sync(isolate: ivm.Isolate, task: Promise<unknown>): Promise<BodyResult> {
    let text: unknown;
    try {
      text = await task;
    } catch (error) {
      if (isolate.isDisposed) throw error;
      // isolated-vm reports a rejection the plugin left unhandled through the task, instead of the answer.
      return { outcome: (usage) => ({ ok: false, code: 'TOOL_ERROR', message: 'the plugin left a promise rejected while answering', usage }), bytesOut: 0, reusable: false };
    }
    return { outcome: (usage) => decodeEnvelope(text, usage), bytesOut: typeof text === 'string' ? text.length : 0, reusable: true };
  }

  async #inRealm(plugin: PluginSpec, tenant: string | undefined, budget: Budget, bytesIn: number, body: Body): Promise<SandboxOutcome> {
    let slot: IsolateSlot;
    try {
      slot = tenant === undefined ? this.#slots.throwaway(plugin) : this.#slots.forTenant(tenant, plugin);
    } catch (error) {
      return { ok: false, code: 'SANDBOX_CRASH', message: `could not create an isolate (${(error as Error).message})`, usage: NO_USAGE };
    }
    const { isolate } = slot;
    const watchdog = new Watchdog(isolate, budget, plugin.limits.memoryMb);
    const useWarm = tenant !== undefined && plugin.realm === 'warm';
    const cleanups: (() => void)[] = [];
    let realm: Realm | undefined;
    let healthy = false;
    let reusable = false;
    try {
      realm = (useWarm ? takeWarm(slot) : undefined) ?? takeSpare(slot) ?? this.#build(slot, plugin);
      // Top-level plugin code runs here, inside the task's budget, never while a realm is prepared.
      const evaluated = await Promise.race([evaluateRealm(isolate, realm, watchdog), watchdog.expired]);
      if (evaluated !== 'ok') return { ok: false, code: 'TOOL_ERROR', message: loadFailureMessage(evaluated), usage: usageOf(watchdog, bytesIn, 0) };
      const ready = realm as Realm & { namespace: ivm.Reference };
      const start = (args: readonly unknown[]): Promise<unknown> => runTask(ready.entry, args, isolate, watchdog);
      const result = await Promise.race([body(ready, isolate, start, (cleanup) => cleanups.push(cleanup)), watchdog.expired]);
      if (isolate.isDisposed) throw new Error('the isolate was disposed');
      // The isolate is idle now, so this is cheap (a few µs) and cannot wait on a lock. V8
      // can outgrow isolated-vm's limit without a collection noticing (flattening a huge
      // rope string, for one): such a call ends as MEMORY_LIMIT and its isolate goes.
      const heap = isolate.getHeapStatisticsSync();
      const heapBytes = heap.used_heap_size + heap.externally_allocated_size;
      if (heapBytes > HEAP_OVERSHOOT_FACTOR * plugin.limits.memoryMb * MIB + HEAP_OVERSHOOT_SLACK_BYTES) {
        return { ok: false, code: 'MEMORY_LIMIT', message: `exceeded its memory limit (${Math.round(heapBytes / MIB)} MiB of ${plugin.limits.memoryMb} MiB)`, usage: usageOf(watchdog, bytesIn, 0) };
      }
      healthy = true;
      reusable = result.reusable;
      return result.outcome(usageOf(watchdog, bytesIn, result.bytesOut));
    } catch (error) {
      if (error instanceof PluginLoadFailure) return { ok: false, code: 'TOOL_ERROR', message: loadFailureMessage(error), usage: usageOf(watchdog, bytesIn, 0) };
      const code = failureCode(watchdog.killedFor, isolate.isDisposed);
      return { ok: false, code, message: code === 'SANDBOX_CRASH' ? `the sandbox failed: ${hostMessage(error)}` : describeLimit(code, budget), usage: usageOf(watchdog, bytesIn, 0) };
    } finally {
      watchdog.stop();
      for (const cleanup of cleanups) cleanup();
      if (healthy && reusable && useWarm && realm !== undefined) slot.warm = realm;
      else if (realm !== undefined) releaseRealm(realm);
      if (!healthy) this.#slots.discard(tenant, plugin, slot);
      if (tenant === undefined) disposeQuietly(isolate);
      else if (healthy && !useWarm) setImmediate(() => this.#prepareSpare(slot, plugin));
    }
  }

  #build(slot: IsolateSlot, plugin: PluginSpec): Realm {
    slot.bootstrap ??= compileBootstrap(slot.isolate, plugin);
    slot.realmGlobals ??= compileRealmGlobals(slot.isolate);
    return buildRealm(slot.isolate, slot.bootstrap, slot.realmGlobals, plugin, this.#calls.reference, this.#codeCache);
  }

  /** Builds the next call's fresh realm while nobody waits; a failure just means none is ready. */
  #prepareSpare(slot: IsolateSlot, plugin: PluginSpec): void {
    if (slot.spare !== undefined || slot.isolate.isDisposed) return;
    try {
      slot.spare = this.#build(slot, plugin);
    } catch {
      slot.spare = undefined;
    }
  }

  dispose(): void {
    this.#slots.disposeAll();
  }
}

function usageOf(watchdog: Watchdog, bytesIn: number, bytesOut: number): Usage {
  const cpu = watchdog.cpuMs();
  return { cpuMs: cpu < 0 ? -1 : round(cpu), wallMs: round(watchdog.wallMs()), bytesIn, bytesOut };
}

function describeLimit(code: SandboxFailureCode, budget: Budget): string {
  switch (code) {
    case 'CPU_LIMIT':
      return `used more than ${budget.cpuMs} ms of CPU time`;
    case 'TIMEOUT':
      return `did not finish within ${budget.timeoutMs} ms`;
    case 'MEMORY_LIMIT':
      return 'exceeded its memory limit';
    case 'ABORTED':
      return 'cancelled while running';
    default:
      return 'the sandbox failed';
  }
}

/** Compile and load errors (a SyntaxError, a bad import) are the plugin's own; host stacks are not. */
function loadFailureMessage(error: PluginLoadFailure): string {
  return `the plugin module failed to load: ${error.message.replace(/\s+at .*$/gms, '').slice(0, 500)}`;
}

function hostMessage(error: unknown): string {
  return error instanceof Error ? error.message.replace(/\s+at .*$/gms, '').slice(0, 200) : 'unknown failure';
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

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
