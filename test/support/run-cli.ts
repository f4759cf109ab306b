// Spawns the built airlock binary the way a user does: plain `node bin.js`, no flags.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  readonly code: number | null;
  /** The signal that ended it (code is then null): the wrapper dies of its inner process's. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function airlock(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Exit 2 means: one line on stderr, no stack trace. */
export function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  if (lines.length !== 1 || /\n\s+at /.test(stderr)) throw new Error(`expected one line on stderr, got:\n${stderr}`);
  return lines[0]!;
}
