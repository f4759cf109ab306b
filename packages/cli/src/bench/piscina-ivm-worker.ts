// Raw Piscina + isolated-vm baseline: each worker keeps one warm context with the sum tool
// and calls it with applySync, the cheapest way into an isolate from a pool thread.
import ivm from '@airlock/sandbox/isolated-vm';
import { SUM_FUNCTION } from './sum-tool.js';

const isolate = new ivm.Isolate({ memoryLimit: 64 });
const context = isolate.createContextSync();
const sum = context.evalSync(SUM_FUNCTION, { reference: true }) as ivm.Reference<(json: string) => string>;

export default function run(argsJson: string): string {
  return sum.applySync(undefined, [argsJson]) as string;
}
