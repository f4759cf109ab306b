// Messages between the embedding process and its sandbox child, over Node IPC.
import type { SandboxOutcome, SandboxTask } from '../isolate/protocol.js';

export type ToChild =
  | { readonly type: 'run'; readonly id: number; readonly task: SandboxTask }
  | { readonly type: 'cancel'; readonly id: number };

export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly id: number; readonly outcome: SandboxOutcome };

export const THREADS_ENV = 'AIRLOCK_SANDBOX_THREADS';
