// The tasks a pool worker runs and what it answers. Everything here is plain data
// (structured-clone and JSON safe): it crosses threads and processes.
import type { PluginLimits } from '../manifest/host-limits.js';

export interface PluginSpec {
  /** Unique per plugin content: name plus a hash of the module source. */
  readonly key: string;
  readonly name: string;
  readonly source: string;
  readonly limits: PluginLimits;
  readonly realm: 'fresh' | 'warm';
  readonly grants: { readonly webAssembly: boolean; readonly sharedArrayBuffer: boolean };
}

export type SandboxTask =
  | { readonly kind: 'describe'; readonly plugin: PluginSpec }
  | { readonly kind: 'call'; readonly plugin: PluginSpec; readonly tenant: string; readonly tool: string; readonly callId: string; readonly argsJson: string; readonly fault?: Fault }
  | { readonly kind: 'classify'; readonly plugin: PluginSpec; readonly tenant: string; readonly calls: readonly { readonly tool: string; readonly argsJson: string }[] }
  | { readonly kind: 'ping' };

/**
 * Testing only: a fault the worker injects into one call (SandboxOptions.faults).
 * `kill-worker` ends the worker thread, `kill-process` the whole sandbox process,
 * `fail-isolate` makes creating the call's isolate fail.
 */
export type Fault = 'kill-worker' | 'kill-process' | 'fail-isolate';

/** Codes a sandboxed call can end with, beyond success. */
export type SandboxFailureCode = 'TOOL_ERROR' | 'TIMEOUT' | 'CPU_LIMIT' | 'MEMORY_LIMIT' | 'OUTPUT_TOO_LARGE' | 'INVALID_TOOL_OUTPUT' | 'SANDBOX_CRASH' | 'ABORTED';

export interface Usage {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

export type SandboxOutcome =
  | { readonly ok: true; readonly json: string; readonly usage: Usage }
  | { readonly ok: false; readonly code: SandboxFailureCode; readonly message: string; readonly usage: Usage };

export const NO_USAGE: Usage = Object.freeze({ cpuMs: 0, wallMs: 0, bytesIn: 0, bytesOut: 0 });
