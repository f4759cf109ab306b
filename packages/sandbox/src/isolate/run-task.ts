// Starts one task in a realm: a call into the bootstrap's entry, asynchronously (the worker
// thread never waits on the isolate), with isolated-vm's own timeout set by the watchdog.
// A task that isolated-vm stopped at that timeout is reported to the watchdog, which reads
// the idle isolate's heap and gives the verdict.
import type ivm from './ivm.js';
import type { Watchdog } from './watchdog.js';

export function runTask(entry: ivm.Reference, args: readonly unknown[], isolate: ivm.Isolate, watchdog: Watchdog): Promise<unknown> {
  const timeout = watchdog.taskTimeoutMs();
  const started = performance.now();
  return entry.apply(undefined, [...args], { timeout }).catch((error: unknown) => {
    // Only the clock tells a stop at our timeout from a rejection the plugin left behind:
    // isolated-vm reports both through the task, and a plugin can reject with any message.
    if (!isolate.isDisposed && performance.now() - started >= timeout - 1) {
      watchdog.taskStopped();
      return watchdog.expired;
    }
    throw error;
  });
}
