// Why an isolate call failed, from what the host knows: its own kill reason first,
// then isolated-vm's message, then the isolate's state.
import type { SandboxFailureCode } from './protocol.js';

export type KillReason = 'cpu' | 'wall' | 'cancel';

/** The plugin module did not compile, link or evaluate: the plugin's fault, not a crash. */
export class PluginLoadFailure extends Error {}

export function failureCode(error: unknown, killedFor: KillReason | undefined, isolateDisposed: boolean): SandboxFailureCode {
  const message = error instanceof Error ? error.message : '';
  // A heap overrun can race the watchdog; isolated-vm's own word on memory wins.
  if (message.includes('memory limit')) return 'MEMORY_LIMIT';
  if (killedFor === 'cpu') return 'CPU_LIMIT';
  if (killedFor === 'wall') return 'TIMEOUT';
  if (killedFor === 'cancel') return 'ABORTED';
  if (message.includes('Script execution timed out')) return 'CPU_LIMIT';
  if (error instanceof PluginLoadFailure) return 'TOOL_ERROR';
  // isolated-vm disposes an isolate on its own only when the heap limit is hit,
  // and then may report no more than "Isolate is disposed" (isolated-vm #113).
  if (isolateDisposed) return 'MEMORY_LIMIT';
  return 'SANDBOX_CRASH';
}
