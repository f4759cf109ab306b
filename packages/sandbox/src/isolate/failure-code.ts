// Why an isolate call failed, from what the host itself knows: its own kill reason first,
// then the isolate's state. Error messages are never trusted for a verdict: a plugin can
// reject with any message, "memory limit" and "timed out" included.
import type { SandboxFailureCode } from '../worker/worker-protocol.js';

/** `cancel`: the task's caller cancelled it while it ran. */
export type KillReason = 'cpu' | 'wall' | 'memory' | 'cancel';

export function failureCode(killedFor: KillReason | undefined, isolateDisposed: boolean): SandboxFailureCode {
  if (killedFor === 'memory') return 'MEMORY_LIMIT';
  if (killedFor === 'cpu') return 'CPU_LIMIT';
  if (killedFor === 'wall') return 'TIMEOUT';
  if (killedFor === 'cancel') return 'ABORTED';
  // isolated-vm disposes an isolate on its own only when the heap limit is hit,
  // and then may report no more than "Isolate is disposed" (isolated-vm #113).
  if (isolateDisposed) return 'MEMORY_LIMIT';
  return 'SANDBOX_CRASH';
}
