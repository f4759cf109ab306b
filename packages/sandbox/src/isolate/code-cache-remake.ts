// Makes a plugin's code caches again (script-code-cache.ts) in an isolate of the sandbox's
// own that runs nothing else, never a tenant's (whose heap and CPU the work would be charged
// to). Done in short steps, one per event-loop turn of an idle worker (isolate-runner.ts):
// the longest, using the URL helper the first time, takes about 12 ms; a task that arrives
// meanwhile waits for that step only, and the remaining steps resume at the next idle time.
import ivm from './ivm.js';
import { withContextLock } from './context-lock.js';
import { disposeQuietly } from './isolate-slots.js';
import { exerciseOf, installRealmGlobals, type PartSet } from './install-realm-globals.js';
import { runOwnScripts } from './realm.js';
import type { ScriptCodeCache } from './script-code-cache.js';

/** Our scripts only: a few MB. */
const OWN_ISOLATE_MB = 64;
/** The exercises are our own code, but bounded all the same. */
const EXERCISE_TIMEOUT_MS = 1000;

export class CodeCacheRemake {
  readonly #bootstrap: ScriptCodeCache;
  readonly #realmGlobals: ScriptCodeCache;
  /** What is left to do, in order; each runs in one step. */
  readonly #steps: (() => void)[];
  #isolate: ivm.Isolate | undefined;
  #script: ivm.Script | undefined;
  #context: ivm.Context | undefined;
  #succeeded = false;

  constructor(bootstrap: ScriptCodeCache, realmGlobals: ScriptCodeCache, parts: PartSet) {
    this.#bootstrap = bootstrap;
    this.#realmGlobals = realmGlobals;
    this.#steps = [
      () => {
        this.#isolate = new ivm.Isolate({
          memoryLimit: OWN_ISOLATE_MB,
          // V8 lost control of it (never seen with our scripts alone): given up, the process goes on.
          onCatastrophicError: () => this.dispose(),
        });
      },
      () => {
        const isolate = this.#own();
        const bootstrapScript = this.#bootstrap.compile(isolate);
        this.#script = this.#realmGlobals.compile(isolate);
        runOwnScripts(isolate, bootstrapScript, this.#script);
        this.#bootstrap.remakeAfterRun(isolate);
      },
      // One helper each: its library's first use is the costly part (URL about 12 ms).
      ...exerciseOf(parts).map((exercise) => () => {
        this.#exerciseContext().evalSync(exercise, { timeout: EXERCISE_TIMEOUT_MS });
      }),
      () => {
        this.#context?.release();
        this.#context = undefined;
        this.#realmGlobals.remakeAfterRun(this.#own());
        this.#succeeded = true;
        this.dispose();
      },
    ];
  }

  /** Runs the next step; false once none is left (done, or failed: the caches stay as they were). */
  step(): boolean {
    const next = this.#steps.shift();
    if (next === undefined) return false;
    try {
      next();
    } catch {
      this.#steps.length = 0;
      this.dispose();
      return false;
    }
    return this.#steps.length > 0;
  }

  get done(): boolean {
    return this.#steps.length === 0;
  }

  /** Every step ran (the caches were made again, or V8 kept the first ones). */
  get succeeded(): boolean {
    return this.#succeeded;
  }

  dispose(): void {
    this.#steps.length = 0;
    if (this.#isolate !== undefined) disposeQuietly(this.#isolate);
    this.#isolate = undefined;
    this.#context = undefined;
  }

  #own(): ivm.Isolate {
    if (this.#isolate === undefined || this.#isolate.isDisposed) throw new Error('the isolate is gone');
    return this.#isolate;
  }

  /** A context of its own for the helpers' exercises, made at the first. */
  #exerciseContext(): ivm.Context {
    if (this.#context !== undefined) return this.#context;
    const isolate = this.#own();
    const script = this.#script;
    if (script === undefined) throw new Error('the helpers are not compiled');
    const context = withContextLock(() => isolate.createContextSync());
    this.#context = context;
    installRealmGlobals(context, script);
    return context;
  }
}
