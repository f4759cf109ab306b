// What each kind of task does in its realm once the runner has it ready and watched: describe
// and classify read one answer from the task itself; a call opens its scope in the call
// registry (the capability bridge and the console), runs until its realm reported and its
// isolate is idle, and is closed however the task ends.
import type { CallRegistry } from './call-registry.js';
import { decodeEnvelope, decodeReport } from './decode-outcome.js';
import type ivm from './ivm.js';
import type { LiveCall } from './live-call.js';
import { NO_USAGE, type CallLogs, type CapabilityHandler, type SandboxOutcome, type SandboxTask, type Usage } from '../worker/worker-protocol.js';

/** What a task's body hands back: its outcome once usage is known, and whether its realm may serve again. */
export interface BodyResult {
  readonly outcome: (usage: Usage) => SandboxOutcome;
  readonly bytesOut: number;
  readonly reusable: boolean;
  /** Native units the task's realm made (calls only; realm-bootstrap.ts). */
  readonly nativeUnits?: number;
}

/** A task's work in its realm; `start` begins a task there under the watchdog, `atEnd` registers a cleanup. */
export type Body = (isolate: ivm.Isolate, start: (args: readonly unknown[]) => Promise<unknown>, atEnd: (cleanup: () => void) => void) => Promise<BodyResult>;

/** Describe and classify return their answer (one JSON envelope) from the task itself. */
export async function answered(isolate: ivm.Isolate, task: Promise<unknown>): Promise<BodyResult> {
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

export interface CallTaskBody {
  readonly body: Body;
  /** What the plugin's console said, however the call ended (undefined if it never opened). */
  readonly logs: () => CallLogs | undefined;
  /** Capability requests the call made, refused ones included (0 if it never opened). */
  readonly requests: () => number;
}

export function callTaskBody(task: Extract<SandboxTask, { kind: 'call' }>, calls: CallRegistry, capabilities: CapabilityHandler | undefined): CallTaskBody {
  let opened: LiveCall | undefined;
  const body: Body = async (isolate, start, atEnd) => {
    const call = calls.open({ isolate, granted: new Set(task.plugin.capabilities), capabilities, start });
    opened = call;
    // Closed however the task ends (a kill included): from then on its requests find nothing.
    atEnd(() => calls.close(call));
    const context = JSON.stringify({ callId: task.callId, tenant: task.tenant });
    call.trackEntry(start(['call', call.token, task.tool, task.argsJson, task.plugin.limits.maxOutputBytes, context]));
    const report = await call.finished;
    return {
      outcome: (usage) => decodeReport(report.kind, report.payload, task.plugin.limits.maxOutputBytes, usage),
      bytesOut: report.payload.length,
      // A warm realm serves again only after a call that succeeded: one that failed (its own
      // throw included) may have left its realm half-changed, and one that still waits on
      // capability answers it will never get is stuck.
      reusable: call.unanswered === 0 && decodeReport(report.kind, report.payload, task.plugin.limits.maxOutputBytes, NO_USAGE).ok,
      nativeUnits: call.nativeUnits,
    };
  };
  return { body, logs: () => opened?.logs(), requests: () => opened?.requests ?? 0 };
}
