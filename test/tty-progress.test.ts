// At a terminal (a real pty through `script`): progress lines while calls run, and
// Ctrl-C typed at the keyboard ends with exit 130 after the finished calls' cards.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from './support/run-cli.js';

const hasScript = existsSync('/usr/bin/script');
const F = 'test/fixtures/interrupt';

/** Runs the binary on a pty; `until` sees the screen so far and may type into the terminal. */
function atTerminal(args: string, until: (screen: string, type: (keys: string) => void) => void): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, TERM: 'xterm-256color', NO_COLOR: '1' };
    const child = spawn('script', ['-qec', `${process.execPath} ${BIN} ${args}`, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const type = (keys: string): void => void child.stdin.write(keys);
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      until(screen, type);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, screen }));
  });
}

describe.skipIf(!hasScript)('progress and Ctrl-C at a terminal', () => {
  it('shows each running call with its elapsed time; Ctrl-C prints the finished calls and exits 130', async () => {
    let typed = false;
    const { code, screen } = await atTerminal(`run ${F}/transcript.json --plugins ${F}/plugins --capabilities ${F}/host.mjs`, (sofar, type) => {
      // The progress line for the waiting call, with a time on it: now press Ctrl-C.
      if (!typed && /wait · call_wait {2}\d+\.\d s/.test(sofar)) {
        typed = true;
        type('\u0003');
      }
    });
    expect(typed).toBe(true);
    expect(code).toBe(130);
    expect(screen).toMatch(/quick {2}✓ ok .*call_first/);
    // Cancelled by the keyboard: the running call ends as ABORTED, the queued one never starts.
    expect(screen).toMatch(/wait {2}✗ ABORTED .*call_wait/);
    expect(screen).toMatch(/quick {2}✗ ABORTED_BEFORE_DISPATCH .*call_after/);
    expect(screen).toContain('airlock: interrupted: 1 call finished, 2 cancelled');
  });
});
