// isolated-vm needs Node started with --no-node-snapshot. A sandbox process of our own is
// always started with it; an embedder's own process is checked before a pool is made in it.
import { SandboxError } from '../errors/sandbox-error.js';

export function hasSnapshotFlag(): boolean {
  return process.execArgv.includes('--no-node-snapshot') || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes('--no-node-snapshot');
}

export function assertSnapshotFlag(): void {
  if (!hasSnapshotFlag()) {
    throw new SandboxError(
      'SNAPSHOT_FLAG_MISSING',
      'isolated-vm needs Node to run with --no-node-snapshot (Node 20+); start node with that flag, or use the default process mode, which sets it for you',
    );
  }
}
