// What a user would pick instead of Airlock, measured in the same run on the same tool:
// raw Piscina (no-op, and with a warm isolated-vm context per worker, in this process or
// behind a child process's IPC), a new isolated-vm context in a warm isolate, a new isolate,
// and QuickJS (warm and fresh contexts).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import ivm from '@airlock/sandbox/isolated-vm';
import { Piscina } from 'piscina';
import { getQuickJS } from 'quickjs-emscripten';
import type { Subject } from './measure.js';
import { respawning, type ProcessPool } from './respawning-pool.js';
import { SUM_ARGS_JSON, SUM_FUNCTION, SUM_MODULE } from './sum-tool.js';

export interface Peers {
  readonly piscinaNoop: () => Promise<unknown>;
  readonly piscinaIvm: () => Promise<unknown>;
  /** The same pool calling in with the asynchronous apply and a timeout, as untrusted code needs. */
  readonly piscinaIvmAsync: () => Promise<unknown>;
  /** The same pool in a child process, one IPC request and answer per call: the process boundary's own price. */
  readonly processPiscinaIvm: () => Promise<unknown>;
  /** That pool behind the boundary calling in with the asynchronous apply: one call, and ten in one IPC message. */
  readonly processPiscinaIvmAsync: () => Promise<unknown>;
  readonly processPiscinaIvmAsyncBatch10: () => Promise<unknown>;
  /** Ten calls submitted at once to the 2-thread Piscina + isolated-vm pool. */
  readonly piscinaIvmBatch10: () => Promise<unknown>;
  readonly piscinaIvmAsyncBatch10: () => Promise<unknown>;
  readonly ivmNewContext: () => unknown;
  readonly ivmNewIsolate: () => unknown;
  readonly quickjsWarm: () => unknown;
  readonly quickjsFresh: () => unknown;
  close(): Promise<void>;
}

/** piscina-ivm-worker.ts's export that calls in with the asynchronous apply. */
const ASYNC = { name: 'runAsync' };

const noImports = (): never => {
  throw new Error('the sum module imports nothing');
};

export async function openPeers(): Promise<Peers> {
  const threads = { minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 1 };
  const noopPool = new Piscina({ filename: new URL('./noop-worker.js', import.meta.url).href, ...threads });
  const ivmPool = new Piscina({ filename: new URL('./piscina-ivm-worker.js', import.meta.url).href, ...threads });
  const processPool = await respawning(openProcessPool);
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  const quickjs = await getQuickJS();
  const warm = quickjs.newContext();
  const sum = warm.unwrapResult(warm.evalCode(SUM_FUNCTION));
  const freshSource = `(${SUM_FUNCTION})(${JSON.stringify(SUM_ARGS_JSON)})`;

  return {
    piscinaNoop: () => noopPool.run(null),
    piscinaIvm: () => ivmPool.run(SUM_ARGS_JSON),
    processPiscinaIvm: () => processPool.run(),
    processPiscinaIvmAsync: () => processPool.run({ async: true }),
    processPiscinaIvmAsyncBatch10: () => processPool.run({ async: true, count: 10 }),
    piscinaIvmAsync: () => ivmPool.run(SUM_ARGS_JSON, ASYNC),
    piscinaIvmBatch10: () => Promise.all(Array.from({ length: 10 }, () => ivmPool.run(SUM_ARGS_JSON))),
    piscinaIvmAsyncBatch10: () => Promise.all(Array.from({ length: 10 }, () => ivmPool.run(SUM_ARGS_JSON, ASYNC))),
    ivmNewContext: () => {
      // What a fresh realm costs at the least: context, module, evaluation, one call.
      const context = isolate.createContextSync();
      const module = isolate.compileModuleSync(SUM_MODULE);
      module.instantiateSync(context, noImports);
      module.evaluateSync();
      const answer = context.evalClosureSync('return $0.default($1)', [module.namespace.derefInto(), SUM_ARGS_JSON]) as string;
      module.release();
      context.release();
      return answer;
    },
    ivmNewIsolate: () => {
      const cold = new ivm.Isolate({ memoryLimit: 64 });
      const context = cold.createContextSync();
      const module = cold.compileModuleSync(SUM_MODULE);
      module.instantiateSync(context, noImports);
      module.evaluateSync();
      const answer = context.evalClosureSync('return $0.default($1)', [module.namespace.derefInto(), SUM_ARGS_JSON]) as string;
      cold.dispose();
      return answer;
    },
    quickjsWarm: () => {
      const argument = warm.newString(SUM_ARGS_JSON);
      const result = warm.unwrapResult(warm.callFunction(sum, warm.undefined, argument));
      const answer = warm.getString(result);
      result.dispose();
      argument.dispose();
      return answer;
    },
    quickjsFresh: () => {
      const context = quickjs.newContext();
      const result = context.unwrapResult(context.evalCode(freshSource));
      const answer = context.getString(result);
      result.dispose();
      context.dispose();
      return answer;
    },
    async close() {
      sum.dispose();
      warm.dispose();
      isolate.dispose();
      await Promise.all([noopPool.destroy(), ivmPool.destroy(), processPool.close()]);
    },
  };
}

/** Peers as subjects, under their metric names. */
export function peerSubjects(peers: Peers, count: (iterations: number) => number): Subject[] {
  return [
    { name: 'baseline.piscina_noop', iterations: count(500), warmup: count(50), body: peers.piscinaNoop },
    { name: 'baseline.piscina_ivm_warm', iterations: count(500), warmup: count(50), body: peers.piscinaIvm },
    { name: 'baseline.piscina_ivm_async_warm', iterations: count(500), warmup: count(50), body: peers.piscinaIvmAsync },
    { name: 'baseline.process_piscina_ivm_warm', iterations: count(500), warmup: count(50), body: peers.processPiscinaIvm },
    { name: 'baseline.process_piscina_ivm_async_warm', iterations: count(500), warmup: count(50), body: peers.processPiscinaIvmAsync },
    { name: 'baseline.ivm_new_context', iterations: count(200), warmup: count(20), body: peers.ivmNewContext },
    { name: 'peer.quickjs_warm', iterations: count(500), warmup: count(50), body: peers.quickjsWarm },
    { name: 'peer.quickjs_fresh', iterations: count(200), warmup: count(20), body: peers.quickjsFresh },
  ];
}

/** The raw Piscina + isolated-vm pool in a child process (process-pool-child.ts), as Airlock's default mode has it. */
async function openProcessPool(): Promise<ProcessPool> {
  // The same IPC serialization as Airlock's sandbox process, and the flag isolated-vm needs.
  const child = fork(new URL('./process-pool-child.js', import.meta.url), [], { execArgv: ['--no-node-snapshot'], serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const waiting = new Map<number, { readonly resolve: (json: unknown) => void; readonly reject: (error: Error) => void }>();
  let next = 0;
  let gone: Error | undefined;
  const exited = once(child, 'exit');
  // A baseline that died must fail the bench, not leave it waiting for ever.
  const died = exited.then(([code, signal]) => {
    gone = new Error(`the raw process-pool baseline exited (${signal ?? `code ${String(code)}`})`);
    for (const pending of waiting.values()) pending.reject(gone);
    waiting.clear();
    throw gone;
  });
  died.catch(() => undefined);
  child.on('message', (message: { readonly id?: number; readonly json?: unknown }) => {
    if (message.id === undefined) return;
    waiting.get(message.id)?.resolve(message.json);
    waiting.delete(message.id);
  });
  await Promise.race([once(child, 'message'), died]);
  return {
    run: (how = {}) =>
      new Promise((resolve, reject) => {
        if (gone !== undefined) return reject(gone);
        const id = (next += 1);
        waiting.set(id, { resolve, reject });
        child.send({ id, argsJson: SUM_ARGS_JSON, ...how });
      }),
    async close() {
      if (gone !== undefined) return;
      child.disconnect();
      await exited;
    },
  };
}
