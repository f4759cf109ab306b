// Messages between the embedding process and its sandbox child, over Node IPC.
import type { PluginSpec, SandboxOutcome, SandboxTask } from '../worker/worker-protocol.js';

/** A task as it crosses to the child: its plugin named by key; the child holds the spec. */
export type WireTask = SandboxTask extends infer Task ? (Task extends { readonly plugin: PluginSpec } ? Omit<Task, 'plugin'> & { readonly plugin: string } : Task) : never;

export type ToChild =
  /** Sent once per plugin and child, before any task that needs it: the spec, source and all. */
  | { readonly type: 'plugin'; readonly spec: PluginSpec }
  /** Tasks travel with their plugin's key only (less to serialize per call); the child fills the spec in. */
  | { readonly type: 'run'; readonly id: number; readonly task: WireTask }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'capability-reply'; readonly id: number; readonly requestId: number; readonly ok: boolean; readonly json?: string };

export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly id: number; readonly outcome: SandboxOutcome }
  /** A worker thread here stopped answering and could not be stopped: take no new calls here. */
  | { readonly type: 'retire' }
  /** An isolate killed for CPU or time here is still running (a builtin that ignores termination): its pair's fault; take no new calls here. */
  | { readonly type: 'zombie'; readonly tenant: string; readonly plugin: string }
  /** Every task of an isolate killed here has stopped: its pair no longer answers for this process's death. */
  | { readonly type: 'killed-settled'; readonly tenant: string; readonly plugin: string }
  /** A running call asks the embedder's capability; the parent answers with capability-reply. */
  | { readonly type: 'capability'; readonly id: number; readonly requestId: number; readonly name: string; readonly json: string };

export const THREADS_ENV = 'AIRLOCK_SANDBOX_THREADS';
/** Where a sandbox child writes whose isolate V8 lost control of, just before it aborts. */
export const BLAME_FILE_ENV = 'AIRLOCK_SANDBOX_BLAME_FILE';
/** The resident-memory ceiling (MiB) the parent kills the child at: its workers evict idle isolates before it is reached. */
export const CEILING_ENV = 'AIRLOCK_SANDBOX_CEILING_MB';
