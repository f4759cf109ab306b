// Messages between the embedding process and its sandbox child, over Node IPC.
import type { SandboxOutcome, SandboxTask } from '../worker/worker-protocol.js';

export type ToChild =
  /** Sent once per plugin and child, before any task that needs it. */
  | { readonly type: 'plugin'; readonly key: string; readonly source: string }
  /** Tasks travel without their plugin's source; the child fills it in by key. */
  | { readonly type: 'run'; readonly id: number; readonly task: SandboxTask }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'capability-reply'; readonly id: number; readonly requestId: number; readonly ok: boolean; readonly json?: string };

export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly id: number; readonly outcome: SandboxOutcome }
  /** A worker thread here stopped answering and could not be stopped: take no new calls here. */
  | { readonly type: 'retire' }
  /** A running call asks the embedder's capability; the parent answers with capability-reply. */
  | { readonly type: 'capability'; readonly id: number; readonly requestId: number; readonly name: string; readonly json: string };

export const THREADS_ENV = 'AIRLOCK_SANDBOX_THREADS';
