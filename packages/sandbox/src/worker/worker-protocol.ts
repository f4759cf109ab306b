// The tasks a pool worker runs and what it answers. Everything here is plain data
// (structured-clone and JSON safe): it crosses threads and processes.
import type { PluginLimits } from '../manifest/host-limits.js';

export interface PluginSpec {
  /** Unique per plugin: its name plus a hash of everything below (module source and the manifest's limits, realm, grants and capabilities). */
  readonly key: string;
  readonly name: string;
  readonly source: string;
  readonly limits: PluginLimits;
  readonly realm: 'fresh' | 'warm';
  readonly grants: { readonly webAssembly: boolean; readonly sharedArrayBuffer: boolean };
  /** Host capabilities the manifest grants, by name; the only host functions a realm can reach. */
  readonly capabilities: readonly string[];
}

/** A plugin's capability call, from the worker to whoever hosts the pool (JSON text both ways). */
export interface CapabilityRequest {
  readonly id: number;
  readonly name: string;
  readonly json: string;
}

export type CapabilityReply = { readonly id: number; readonly ok: true; readonly json: string } | { readonly id: number; readonly ok: false };

/** What the pool's workers receive: the task, and for calls that may use capabilities, a port to ask on. */
export interface PoolTask {
  readonly task: SandboxTask;
  readonly capabilityPort?: import('node:worker_threads').MessagePort;
  /** Where the worker stamps Date.now() when it starts the task: the host's backstop clock starts there (host/task-backstop.ts). */
  readonly clock: number | SharedArrayBuffer;
  /** The plugin's module source as UTF-8 bytes (the task's own `plugin.source` is empty on the way): host/shared-plugin-sources.ts. */
  readonly source?: SharedArrayBuffer;
}

/** In a task's own clock buffer (every shared slot taken): the cancel flag's byte offset, after the start time. */
export const OWN_CLOCK_CANCEL_OFFSET = 8;

/** Answers a capability call of the running task; rejects (with no detail for the plugin) on failure. */
export type CapabilityHandler = (name: string, json: string) => Promise<string>;

export type SandboxTask =
  | { readonly kind: 'describe'; readonly plugin: PluginSpec }
  | { readonly kind: 'call'; readonly plugin: PluginSpec; readonly tenant: string; readonly tool: string; readonly callId: string; readonly argsJson: string; readonly fault?: Fault }
  | { readonly kind: 'classify'; readonly plugin: PluginSpec; readonly tenant: string; readonly calls: readonly { readonly tool: string; readonly argsJson: string }[] }
  | { readonly kind: 'ping' };

/**
 * Testing only: a fault the worker injects into one call (SandboxOptions.faults).
 * `kill-worker` ends the worker thread, `kill-process` the whole sandbox process,
 * `fail-isolate` makes creating the call's isolate fail, `hang-worker` blocks the worker
 * thread for good (as a thread stuck on an isolate's lock would be), `catastrophe` aborts the
 * process as V8 losing control of the call's isolate does (the isolate's owner named first).
 */
export type Fault = 'kill-worker' | 'kill-process' | 'fail-isolate' | 'hang-worker' | 'catastrophe';

/** Codes a sandboxed call can end with, beyond success (ABORTED_BEFORE_DISPATCH: cancelled while queued for a worker). */
export type SandboxFailureCode = 'TOOL_ERROR' | 'TIMEOUT' | 'CPU_LIMIT' | 'MEMORY_LIMIT' | 'OUTPUT_TOO_LARGE' | 'INVALID_TOOL_OUTPUT' | 'SANDBOX_CRASH' | 'ABORTED' | 'ABORTED_BEFORE_DISPATCH';

export interface Usage {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

/** What a plugin's console said during one call (bounded), and how many lines were dropped. */
export interface CallLogs {
  readonly lines: readonly { readonly level: 'debug' | 'info' | 'warn' | 'error'; readonly message: string }[];
  readonly dropped: number;
}

/** What a call leaves besides its answer: its plugin's log, and every capability request it made (refused ones too). */
interface CallTraces {
  readonly logs?: CallLogs;
  readonly capabilityRequests?: number;
  /**
   * Its isolate was killed for CPU, time or a cancel and its work may not have stopped yet:
   * until the worker says it has (`onKilledSettled`), a death of its process is this pair's
   * doing before anyone's in flight (a builtin that ignores termination can end in a V8 fatal error).
   */
  readonly stillRunning?: true;
}

export type SandboxOutcome =
  | ({ readonly ok: true; readonly json: string; readonly usage: Usage } & CallTraces)
  | ({ readonly ok: false; readonly code: SandboxFailureCode; readonly message: string; readonly usage: Usage } & CallTraces);

export const NO_USAGE: Usage = Object.freeze({ cpuMs: 0, wallMs: 0, bytesIn: 0, bytesOut: 0 });

/** The answer to a task cancelled before any worker started it: no plugin code of it ran. */
export const NOT_DISPATCHED: SandboxOutcome = Object.freeze({ ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: 'cancelled while waiting for a sandbox worker', usage: NO_USAGE });
