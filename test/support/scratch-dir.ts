// Vitest's global setup: every test run gets its own scratch folder as TMPDIR, for the test
// processes and the sandbox processes they start, and the folder goes when the run ends.
// Plugin folders, workspaces and kv files that a test made and did not remove (a failed
// assertion skips its cleanup) no longer pile up in the machine's /tmp, run after run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const scratch = mkdtempSync(join(tmpdir(), 'airlock-test-'));
  process.env.TMPDIR = scratch;
  return () => {
    rmSync(scratch, { recursive: true, force: true });
  };
}
