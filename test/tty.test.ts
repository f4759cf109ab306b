// The CLI as a person at a terminal sees it: `script` gives the binary a real pty.
// Cards by default, colour unless NO_COLOR, and `ask` answered at the prompt.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answeringAtTerminal } from './support/answering-terminal.js';
import { BIN, ROOT } from './support/run-cli.js';

const hasScript = existsSync('/usr/bin/script');

function atTerminal(args: string, options: { env?: Record<string, string> } = {}): string {
  const env: Record<string, string | undefined> = { ...process.env, TERM: 'xterm-256color', ...options.env };
  if (options.env?.NO_COLOR === undefined) delete env.NO_COLOR;
  const result = spawnSync('script', ['-qec', `${process.execPath} ${BIN} ${args}`, '/dev/null'], { cwd: ROOT, env, input: '', encoding: 'utf8', timeout: 60_000 });
  return result.stdout;
}

// An SGR escape sequence (ESC [ n m): what colour output is made of.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[\\d+m`);

describe.skipIf(!hasScript)('at a terminal', () => {
  it('renders cards with colour by default', () => {
    const screen = atTerminal('run');
    expect(screen).toMatch(ANSI);
    expect(screen).toContain('PERMISSION_DENIED');
    expect(screen).toContain('6 calls: 3 succeeded, 3 failed');
  });

  it('respects NO_COLOR', () => {
    const screen = atTerminal('run', { env: { NO_COLOR: '1' } });
    expect(screen).not.toMatch(ANSI);
    expect(screen).toContain('✗ PERMISSION_DENIED');
  });

  it.each([
    ['y', '✓ ok'],
    ['n', '✗ PERMISSION_DENIED'],
  ])('asks before an "ask" tool runs; answering %s gives %s', async (answer, outcome) => {
    const screen = await answeringAtTerminal('run test/fixtures/transcripts/openai-ask.json --plugins examples/plugins', [answer]);
    expect(screen).toMatch(/Allow delete_file\(\{"path":"notes\/old.md"\}\)\?.*\[y\/N\]/);
    expect(screen).toContain(`delete_file  ${outcome}`);
  });
});
