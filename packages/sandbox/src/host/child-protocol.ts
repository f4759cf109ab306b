// Messages between the embedding process and its sandbox child, over Node IPC.
import type { SandboxOutcome, SandboxTask } from '../isolate/protocol.js';

export type ToChild =
  /** Sent once per plugin and child, before any task that needs it. */
  | { readonly type: 'plugin'; readonly key: string; readonly source: string }
  /** Tasks travel without their plugin's source; the child fills it in by key. */
  | { readonly type: 'run'; readonly id: number; readonly task: SandboxTask }
  | { readonly type: 'cancel'; readonly id: number };

export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly id: number; readonly outcome: SandboxOutcome };

export const THREADS_ENV = 'AIRLOCK_SANDBOX_THREADS';
