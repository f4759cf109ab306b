// Runs sandbox tasks in isolated-vm isolates, one task at a time per worker thread: picks the
// task's isolate (isolate-slots.ts) and realm (realm-supply.ts), watches its budget
// (task-budgets.ts, watchdog.ts), runs its body (task-bodies.ts) and turns however it ended
// into an outcome (task-failure.ts). An isolate that hit a limit or failed is disposed, never reused.
import { CallRegistry } from './call-registry.js';
import { failureCode } from './failure-code.js';
import { disposeQuietly, IsolateSlots, type CatastropheWitness, type IsolateSlot } from './isolate-slots.js';
import { NO_USAGE, type CapabilityHandler, type PluginSpec, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import { evaluateRealm, PluginLoadFailure, type Realm } from './realm.js';
import { RealmSupply } from './realm-supply.js';
import { runTask } from './run-task.js';
import { answered, callTaskBody, type Body } from './task-bodies.js';
import { taskBudget } from './task-budgets.js';
import { heapBytesOf, heapCheckDue, heapOvershoot, killedOutcome, loadFailure, usageOf } from './task-failure.js';
import { Watchdog, type Budget } from './watchdog.js';

export interface IsolateRunnerOptions {
  /** No task waits for a worker of this pool: only then is anything built ahead. */
  readonly nothingQueued: () => boolean;
  /**
   * Told when an isolate this worker killed is still running a task ZOMBIE_MS after its call
   * was answered: a builtin that ignores termination (a huge TypedArray sort, an Array fill)
   * goes on using CPU, until it ends or isolated-vm gives up on it. Whose call it was is certain.
   */
  readonly zombie?: (pair: { readonly tenant: string; readonly plugin: string }) => void;
  /** Told whose isolate it was when V8 lost control of one: says whether the process retires (contained) or aborts. */
  readonly catastrophe?: CatastropheWitness;
  /** Told when every task of an isolate this worker killed has stopped (its call was answered `stillRunning`). */
  readonly killedSettled?: (pair: { readonly tenant: string; readonly plugin: string }) => void;
}

/**
 * Whom a plugin's loading (describe, in an isolate of no tenant's) is blamed on: a pair no
 * call of any tenant shares, so a module whose top level takes its process down strikes
 * neither the tenants in flight then nor anyone else.
 */
const LOADING_TENANT = '\u0000loading';
/** isolated-vm's catastrophe when V8 ran out of memory past recovery in an isolate. */
const OUT_OF_MEMORY = 'Catastrophic out-of-memory error';

/** Killed for CPU, time or a cancel: its tasks were told to stop, and may not have (builtins that ignore termination). */
function killedOnce(watchdog: Watchdog): boolean {
  return watchdog.killedFor === 'cpu' || watchdog.killedFor === 'wall' || watchdog.killedFor === 'cancel';
}

/** A build-ahead step: run after `afterMs` of idleness, or at the next event-loop turn when 0. */
interface AheadStep {
  readonly afterMs: number;
  /** Returns true when it has more to do: it runs again at the next turn. */
  readonly run: () => boolean | void;
}

/**
 * How long this worker stays idle after a task before it builds an isolate for tenants to
 * come: longer than a client's round trip to its next call (0.3-1 ms, several under load).
 */
const IDLE_BEFORE_READY_MS = 5;
/** How long a call runs in its isolate before this worker builds that isolate meanwhile. */
const RUNNING_BEFORE_READY_MS = 10;
/** How long a killed isolate's tasks may take to stop before the isolate counts as a zombie. */
const ZOMBIE_MS = 1000;
/** How long after a task the isolates it evicted are disposed (isolate-slots.ts, disposeRetired). */
const DISPOSE_RETIRED_AFTER_MS = 3;
/**
 * Native units an isolate's realms may make in all before it is replaced: an Intl object 1
 * (realm-bootstrap.ts), and every realm of a WebAssembly-granted plugin 128 (realm-supply.ts).
 */
const MAX_NATIVE_UNITS_PER_ISOLATE = 500;
/** Smaller isolates are not worth a cold start: evicting them would free little. */
const EVICTABLE_BYTES = 16 * 1024 * 1024;

export class IsolateRunner {
  readonly #slots: IsolateSlots;
  readonly #calls = new CallRegistry();
  readonly #realms = new RealmSupply(this.#calls.callback);
  readonly #nothingQueued: () => boolean;
  readonly #zombie: NonNullable<IsolateRunnerOptions['zombie']>;
  readonly #killedSettled: NonNullable<IsolateRunnerOptions['killedSettled']>;
  /** What the last task's isolate held when it was read after the task (0 when it was not read). */
  #lastHeldBytes = 0;
  /** Cancels the build-ahead steps still scheduled; the next task calls it. */
  #cancelAhead: (() => void) | undefined;

  constructor(options: IsolateRunnerOptions = { nothingQueued: () => false }) {
    this.#nothingQueued = options.nothingQueued;
    this.#slots = new IsolateSlots(options.catastrophe);
    this.#zombie = options.zombie ?? (() => undefined);
    this.#killedSettled = options.killedSettled ?? (() => undefined);
  }

  /** Testing only: the next isolate creation throws, as it would when the system is out of memory. */
  failNextIsolate(): void {
    this.#slots.failNextIsolate();
  }

  /** `cancelled` says whether the task's caller cancelled it: the watchdog then stops the isolate (ABORTED). */
  async run(task: SandboxTask, capabilities?: CapabilityHandler, cancelled: () => boolean = () => false): Promise<SandboxOutcome> {
    this.#cancelAhead?.();
    switch (task.kind) {
      case 'ping':
        return { ok: true, json: '"pong"', usage: NO_USAGE };
      case 'describe':
        // Describing loads the module in a throwaway isolate: no tenant's isolate is touched.
        return this.#inRealm(task.plugin, undefined, taskBudget(task), 0, (isolate, start) => answered(isolate, start(['describe'])), cancelled);
      case 'classify': {
        const callsJson = JSON.stringify(task.calls);
        return this.#inRealm(task.plugin, task.tenant, taskBudget(task), callsJson.length, (isolate, start) => answered(isolate, start(['classify', callsJson])), cancelled);
      }
      case 'call': {
        const call = callTaskBody(task, this.#calls, capabilities);
        const outcome = await this.#inRealm(task.plugin, task.tenant, task.plugin.limits, task.argsJson.length, call.body, cancelled);
        // What the plugin's console said, attached to the outcome however the call ended.
        const logs = call.logs();
        const requests = call.requests();
        return {
          ...outcome,
          ...(logs === undefined || (logs.lines.length === 0 && logs.dropped === 0) ? {} : { logs }),
          // Every request counts, the ones refused here (not granted, too large, too many) too.
          ...(requests > 0 ? { capabilityRequests: requests } : {}),
        };
      }
    }
  }

  async #inRealm(plugin: PluginSpec, tenant: string | undefined, budget: Budget, bytesIn: number, body: Body, cancelled: () => boolean): Promise<SandboxOutcome> {
    let slot: IsolateSlot;
    try {
      slot = tenant === undefined ? this.#slots.throwaway(plugin, { tenant: LOADING_TENANT, plugin: plugin.name }) : this.#slots.forTenant(tenant, plugin);
    } catch (error) {
      return { ok: false, code: 'SANDBOX_CRASH', message: `could not create an isolate (${(error as Error).message})`, usage: NO_USAGE };
    }
    const { isolate } = slot;
    const watchdog = new Watchdog(isolate, budget, plugin.limits.memoryMb, cancelled);
    // Out of memory past recovery, contained (isolate-slots.ts): the call's answer is MEMORY_LIMIT.
    slot.lost = (message) => {
      if (message === OUT_OF_MEMORY) watchdog.kill('memory');
    };
    const useWarm = tenant !== undefined && plugin.realm === 'warm';
    const cleanups: (() => void)[] = [];
    /** Every task this call started in the isolate: after a kill, they tell when it really stopped. */
    const started: Promise<unknown>[] = [];
    let realm: Realm | undefined;
    let healthy = false;
    let reusable = false;
    /** Healthy, but to be replaced after this call (see MAX_NATIVE_UNITS_PER_ISOLATE). */
    let retire = false;
    slot.busy += 1;
    slot.served += 1;
    try {
      realm = this.#realms.take(slot, plugin, useWarm);
      // Top-level plugin code runs here, inside the task's budget, never while a realm is
      // prepared. The task's own work is queued right behind it (see evaluateRealm).
      const evaluation = realm.evaluated ? undefined : evaluateRealm(isolate, realm, watchdog);
      if (evaluation !== undefined) started.push(evaluation);
      const { entry } = realm;
      const start = (args: readonly unknown[]): Promise<unknown> => {
        const task = runTask(entry, args, isolate, watchdog);
        started.push(task);
        return task;
      };
      const work = body(isolate, start, (cleanup) => cleanups.push(cleanup));
      // While the call runs in its isolate this thread is idle: a long call (one about to be
      // killed, or waiting on a capability) has the next tenant's isolate built meanwhile, so
      // the call after a kill finds one ready.
      if (tenant !== undefined) this.#buildWhileRunning(plugin);
      if (evaluation !== undefined) {
        work.catch(() => undefined); // raced below, once the evaluation is known to be good
        const evaluated = await Promise.race([evaluation, watchdog.expired]);
        if (evaluated !== 'ok') return loadFailure(evaluated, usageOf(watchdog, bytesIn, 0));
      }
      const result = await Promise.race([work, watchdog.expired]);
      if (isolate.isDisposed) throw new Error('the isolate was disposed');
      const heldBytes = heapCheckDue(slot, watchdog.cpuMs()) ? heapBytesOf(isolate) : undefined;
      this.#lastHeldBytes = heldBytes ?? 0;
      const outgrown = heldBytes === undefined ? undefined : heapOvershoot(heldBytes, plugin.limits.memoryMb);
      if (outgrown !== undefined) return { ok: false, code: 'MEMORY_LIMIT', message: outgrown, usage: usageOf(watchdog, bytesIn, 0) };
      healthy = true;
      reusable = result.reusable;
      // An isolate whose realms made many Intl objects or WebAssembly memories holds memory or
      // address space its heap does not show (kept, or garbage a small heap never collects):
      // replaced after this call.
      slot.nativeUnits += result.nativeUnits ?? 0;
      if (slot.nativeUnits > MAX_NATIVE_UNITS_PER_ISOLATE) retire = true;
      return result.outcome(usageOf(watchdog, bytesIn, result.bytesOut));
    } catch (error) {
      if (error instanceof PluginLoadFailure) return loadFailure(error, usageOf(watchdog, bytesIn, 0));
      const killed = killedOutcome(failureCode(watchdog.killedFor, isolate.isDisposed), error, usageOf(watchdog, bytesIn, 0));
      // Its tasks are told to stop, not yet stopped (#watchForZombie reports when they have).
      return killedOnce(watchdog) ? { ...killed, stillRunning: true } : killed;
    } finally {
      slot.busy -= 1;
      slot.lost = undefined;
      watchdog.stop();
      for (const cleanup of cleanups) cleanup();
      if (realm !== undefined) this.#realms.giveBack(slot, realm, healthy && reusable && useWarm);
      if (!healthy || retire) this.#slots.discard(tenant, plugin, slot);
      // A kill for CPU or time stops a task at once, unless a builtin ignores termination. (At the
      // heap limit isolated-vm disposes the isolate itself, and from Node 24 may never settle the
      // task: that is no zombie.)
      if (killedOnce(watchdog)) this.#watchForZombie(started, { tenant: tenant ?? LOADING_TENANT, plugin: plugin.name });
      // After the answer is on its way, and a little later still: disposed at the next turn,
      // the isolate's disposal (0.8 ms) delayed the answer's arrival in the host by about as long.
      if (this.#slots.hasRetired) setTimeout(() => this.#slots.disposeRetired(), DISPOSE_RETIRED_AFTER_MS);
      if (tenant === undefined) disposeQuietly(isolate);
      else this.#buildAhead([
        // The next fresh call of this tenant finds its realm built, once the tenant has come
        // back: after a one-shot tenant's only call that realm would never serve anyone (about
        // 1.5 of the 9 ms of CPU a new tenant's call cost in all).
        {
          afterMs: 0,
          run: () => {
            if (healthy && !retire && !useWarm && slot.served > 1) this.#realms.prepareSpare(slot, plugin);
          },
        },
        // Then, after a pause, the isolate for the next tenant new to this worker: a call
        // that follows at once (this tenant's next, a client's loop) comes first, instead of
        // waiting for 7 ms of building it never uses.
        ...this.#readyIsolateSteps(plugin, IDLE_BEFORE_READY_MS),
        // Last, once per thread for this plugin's scripts: their code caches made again in an
        // isolate of our own, a step per turn, so the next new isolates compile less.
        { afterMs: 0, run: () => this.#realms.remakeCodeCaches(plugin) },
      ]);
    }
  }

  /**
   * The next tenant new to this worker (or this one, after a kill) finds an isolate with a
   * realm built: its first call pays no isolate start. Two steps, so a task that arrives
   * while the isolate starts (several ms, with no asynchronous form) waits for that alone.
   */
  #readyIsolateSteps(plugin: PluginSpec, afterMs: number): AheadStep[] {
    return [
      { afterMs, run: () => void this.#slots.prepareReady(plugin) },
      {
        afterMs: 0,
        run: () => {
          const ready = this.#slots.prepareReady(plugin);
          if (ready !== undefined) this.#realms.prepareSpare(ready, plugin);
        },
      },
    ];
  }

  /**
   * Builds the ready isolate while this task's call runs, once it has run RUNNING_BEFORE_READY_MS:
   * a shorter call is never held up by it, a longer one that ends meanwhile by one step (3-4 ms;
   * its watchdog's poll likewise). Measured from now (after the realm was built), not from
   * the event loop's clock, which synchronous work leaves behind.
   */
  #buildWhileRunning(plugin: PluginSpec): void {
    const since = performance.now();
    const wait = (ms: number): void => {
      const timer = setTimeout(() => {
        const left = RUNNING_BEFORE_READY_MS - (performance.now() - since);
        if (left > 0) wait(left);
        else this.#buildAhead(this.#readyIsolateSteps(plugin, 0));
      }, ms);
      this.#cancelAhead = () => clearTimeout(timer);
    };
    wait(RUNNING_BEFORE_READY_MS);
  }

  /** Reports the pair if a task of its killed isolate has not stopped within ZOMBIE_MS. */
  #watchForZombie(tasks: readonly Promise<unknown>[], pair: { readonly tenant: string; readonly plugin: string }): void {
    let stopped = false;
    const timer = setTimeout(() => {
      if (!stopped) this.#zombie(pair);
    }, ZOMBIE_MS);
    timer.unref();
    void Promise.allSettled(tasks).then(() => {
      stopped = true;
      clearTimeout(timer);
      this.#killedSettled(pair);
    });
  }

  /**
   * Runs `steps` one per event-loop turn (or after its own pause), each only while no task
   * waits for a worker of the pool, and none once this worker has a task again. No step runs
   * plugin code.
   */
  #buildAhead(steps: readonly AheadStep[]): void {
    this.#cancelAhead?.();
    const schedule = (index: number): void => {
      const step = steps[index];
      if (step === undefined) {
        this.#cancelAhead = undefined;
        return;
      }
      const run = (): void => {
        if (!this.#nothingQueued()) return;
        const again = step.run() === true;
        schedule(again ? index : index + 1);
      };
      if (step.afterMs > 0) {
        const timer = setTimeout(run, step.afterMs);
        this.#cancelAhead = () => clearTimeout(timer);
      } else {
        const immediate = setImmediate(run);
        this.#cancelAhead = () => clearImmediate(immediate);
      }
    };
    schedule(0);
  }

  /** Whether the last task left its isolate holding enough memory to be worth evicting. */
  lastTaskHeldMuch(): boolean {
    return this.#lastHeldBytes >= EVICTABLE_BYTES;
  }

  /**
   * Disposes this worker's largest idle tenant isolates (EVICTABLE_BYTES or more each) until
   * they held `bytes` together, or none is left: memory a tenant parks in its warm realms
   * between calls costs that tenant a cold start, not the neighbours whose calls would be in
   * flight when the process is killed at its ceiling.
   */
  relieveMemory(bytes: number): void {
    let freed = 0;
    while (freed < bytes) {
      const held = this.#slots.evictLargestIdle(EVICTABLE_BYTES);
      if (held === 0) return;
      freed += held;
    }
  }

  dispose(): void {
    this.#realms.dispose();
    this.#slots.disposeAll();
  }
}
