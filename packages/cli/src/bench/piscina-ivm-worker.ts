// Raw Piscina + isolated-vm baseline: each worker keeps one warm context with the sum tool
// and calls it with applySync, the cheapest way into an isolate from a pool thread, or with
// the asynchronous apply and a timeout, the way untrusted code must be called (runAsync).
import ivm from '@airlock/sandbox/isolated-vm';
import { SUM_FUNCTION } from './sum-tool.js';

const isolate = new ivm.Isolate({ memoryLimit: 64 });
const context = isolate.createContextSync();
const sum = context.evalSync(SUM_FUNCTION, { reference: true }) as ivm.Reference<(json: string) => string>;

export default function run(argsJson: string): string {
  return sum.applySync(undefined, [argsJson]) as string;
}

/**
 * The same call as untrusted code must be made: the asynchronous `apply`, with a timeout.
 * After `applySync` isolated-vm copies out a rejection the code left unhandled on the calling
 * thread with no timeout, so a plugin could hold the pool thread for ever
 * (docs/benchmarks.md): the floor of any sandbox on isolated-vm, Airlock's included.
 */
export function runAsync(argsJson: string): Promise<string> {
  return sum.apply(undefined, [argsJson], { timeout: 1000 }) as Promise<string>;
}
